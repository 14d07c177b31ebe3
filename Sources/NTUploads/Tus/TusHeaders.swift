import Foundation
import NTAPIModel
import NTHashing
import NTServiceModel
import NTServiceStorage

/// The headers of tus 1.0.0 (tus.io/protocols/resumable-upload), parsed strictly.
package enum TusHeaders {
    static let version = TusProtocol.version
    static let extensions = "creation,creation-with-upload,termination,checksum,expiration"
    static let checksumAlgorithms = "sha1,sha256"

    /// `Tus-Resumable` must name the version served (412 otherwise).
    static func checkResumable(_ value: String?) throws(ServiceError) {
        guard value == version else {
            throw ServiceError(.preconditionFailed, "Tus-Resumable must be \(version)")
        }
    }

    /// `Upload-Offset`, `Upload-Length`: a non-negative integer.
    static func integer(_ value: String?, _ name: String) throws(ServiceError) -> Int64 {
        guard let value else { throw .badRequest("missing \(name)") }
        guard !value.isEmpty, value.count <= 18, value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber), let number = Int64(value) else {
            throw .badRequest("\(name) must be a non-negative integer")
        }
        return number
    }

    /// `Upload-Metadata`: comma-separated `key base64value` pairs; a key may come without a value.
    static func metadata(_ header: String?) throws(ServiceError) -> [String: String] {
        guard let header, !header.trimmingCharacters(in: .whitespaces).isEmpty else { return [:] }
        var pairs: [String: String] = [:]
        for item in header.split(separator: ",") {
            let parts = item.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true)
            guard (1...2).contains(parts.count), !parts[0].isEmpty, !parts[0].contains(",") else {
                throw .badRequest("malformed Upload-Metadata")
            }
            let key = String(parts[0])
            guard pairs[key] == nil else { throw .badRequest("Upload-Metadata repeats \(key)") }
            if parts.count == 2 {
                guard let bytes = ByteEncoding.bytes(fromBase64: parts[1]), let text = String(validating: bytes, as: UTF8.self) else {
                    throw .badRequest("Upload-Metadata value of \(key) is not base64 of UTF-8 text")
                }
                pairs[key] = text
            } else {
                pairs[key] = ""
            }
        }
        return pairs
    }

    /// `Upload-Checksum: <algorithm> <base64 digest>` (checksum extension).
    static func checksum(_ header: String?) throws(ServiceError) -> (DigestAlgorithm, [UInt8])? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw .badRequest("Upload-Checksum is \"<algorithm> <base64>\"") }
        guard let algorithm = DigestAlgorithm(rawValue: parts[0].lowercased()) else {
            throw .badRequest("Upload-Checksum algorithm must be sha1 or sha256")
        }
        guard let digest = ByteEncoding.bytes(fromBase64: parts[1]), digest.count == algorithm.byteCount else {
            throw .badRequest("Upload-Checksum digest is not base64 of a \(algorithm.rawValue) digest")
        }
        return (algorithm, digest)
    }
}
