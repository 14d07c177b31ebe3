import NTAPIModel
import Foundation
import NTHashing

/// A plan upload as the service applies it: the plan, and the digest of its canonical bytes
/// (another plan under the same planId is told apart by it).
package struct PlanUpload {
    package var plan: PlanInput
    package var digest: String

    package static func parse(_ bytes: [UInt8], maxDepth: Int = JSONReader.defaultMaxDepth,
                      maxCoordinate: Double = PlanInput.defaultMaxCoordinate) throws(ServiceError) -> PlanUpload {
        let (plan, canonical) = try ServiceError.parsing { () throws(InvalidDocument) in
            try PlanInput.parse(bytes, maxDepth: maxDepth, maxCoordinate: maxCoordinate)
        }
        return PlanUpload(plan: plan, digest: ByteEncoding.hex(StreamingDigest.hash(.sha256, canonical)))
    }
}

/// Panorama media types (docs/api.md: jpeg, heic, png).
package enum PanoramaMediaType {
    static let allowed: Set<String> = ["image/jpeg", "image/heic", "image/png"]

    /// The media type without parameters, lowercased, when allowed.
    /// `what`: the image's name in the error ("a panorama", "a logo").
    package static func validated(_ header: String?, what: String = "a panorama") throws(ServiceError) -> String {
        let type = (header ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard allowed.contains(type) else {
            throw ServiceError(.unsupportedMediaType, "\(what) must be image/jpeg, image/heic or image/png, not \"\(type.prefix(100))\"")
        }
        return type
    }

    /// Refuses bytes that are not of their declared type (415), told by their signature: a
    /// README renamed `.jpg` or random bytes would be stored, counted and shown as a grey box.
    /// (`PanoramaImageFormat`, which the client's capture check reads too).
    package static func checkContent(_ type: String, head: [UInt8], what: String = "a panorama") throws(ServiceError) {
        guard PanoramaImageFormat(signature: head)?.contentType != type else { return }
        let start = head.isEmpty ? "empty" : "with hex " + ByteEncoding.hex(Array(head.prefix(8)))
        throw ServiceError(.unsupportedMediaType, "the bytes are not \(type) (they start \(start)): "
                           + "\(what) must be a JPEG, HEIC or PNG image, as its Content-Type says")
    }
}

extension PanoramaPosition {
    /// A creation's `x`, `y`, `heading` and `height` (a query or tus metadata), or a 400 saying what is wrong.
    package static func checked(x: String?, y: String?, heading: String?, height: String?) throws(ServiceError) -> PanoramaPosition? {
        try ServiceError.parsing { () throws(InvalidDocument) in try parse(x: x, y: y, heading: heading, height: height) }
    }
}

/// `Repr-Digest` (RFC 9530 §3): a structured-field dictionary of algorithm to byte sequence.
/// Only sha-256 is used; other algorithms are ignored as §3 allows.
package enum ReprDigest {
    /// The SHA-256 the client declared, or nil when there is no header. `field`: the field's
    /// name for the error (RFC 9530's `Content-Digest` has the same form).
    package static func sha256(_ header: String?, field: String = "Repr-Digest") throws(ServiceError) -> [UInt8]? {
        guard let header else { return nil }
        for member in header.split(separator: ",") {
            let parts = member.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { throw .badRequest("malformed \(field)") }
            let key = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            var value = parts[1].trimmingCharacters(in: .whitespaces)
            // Parameters after ';' belong to the member, not the value.
            if let semicolon = value.firstIndex(of: ";") { value = String(value[..<semicolon]) }
            guard value.count >= 2, value.hasPrefix(":"), value.hasSuffix(":"),
                  let bytes = ByteEncoding.bytes(fromBase64: value.dropFirst().dropLast()) else {
                throw .badRequest("malformed \(field): a digest is :base64:")
            }
            if key == "sha-256" {
                guard bytes.count == 32 else { throw .badRequest("a sha-256 digest is 32 bytes") }
                return bytes
            }
        }
        throw .badRequest("\(field) has no sha-256")
    }
}
