import NTHashing
import NTServiceModel

/// The secrets toursd hands out (bearer tokens, session cookies, share links): 256 random
/// bits as base64url without padding (RFC 4648 §5: safe in headers, paths and shells), stored
/// only as their SHA-256 and compared as digests in constant time.
package enum Secrets {
    package static func make(prefix: String) -> String {
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        return prefix + ByteEncoding.base64URL(bytes)
    }

    package static func hash(_ secret: String) -> [UInt8] {
        StreamingDigest.hash(.sha256, Array(secret.utf8))
    }
}
