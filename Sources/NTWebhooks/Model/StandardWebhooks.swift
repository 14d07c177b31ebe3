import NTHashing
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage

/// The Standard Webhooks specification's headers (webhook-id, webhook-timestamp,
/// webhook-signature) and secrets: what a receiver's stock verifier checks. Pure.
enum StandardWebhooks {
    static let secretPrefix = "whsec_"

    /// A secret as the specification writes it: "whsec_" and the key's base64.
    static func secret(_ key: [UInt8]) -> String { secretPrefix + ByteEncoding.base64(key) }

    /// The key of a secret written as `secret` writes it.
    static func key(_ secret: String) -> [UInt8]? {
        guard secret.hasPrefix(secretPrefix) else { return nil }
        return ByteEncoding.bytes(fromBase64: secret.dropFirst(secretPrefix.count))
    }

    /// "v1," and the base64 of HMAC-SHA256 over "{id}.{timestamp}.{body}" under the key.
    static func signature(key: [UInt8], id: String, timestamp: Int64, body: [UInt8]) -> String {
        "v1," + ByteEncoding.base64(hmacSHA256(key: key, Array("\(id).\(timestamp).".utf8) + body))
    }

    /// A message's id: the same for every attempt of one event to one endpoint (receivers
    /// drop what they have seen), different across endpoints and tenants.
    static func messageId(webhook: String, event: Int64) -> String {
        "msg_" + webhook.filter { $0 != "-" } + "_" + String(event)
    }

    static func headers(key: [UInt8], id: String, timestamp: Int64, body: [UInt8]) -> [(name: String, value: String)] {
        [("webhook-id", id), ("webhook-timestamp", String(timestamp)),
         ("webhook-signature", signature(key: key, id: id, timestamp: timestamp, body: body)),
         ("Content-Type", "application/json")]
    }
}
