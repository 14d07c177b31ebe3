import Foundation

/// The image formats a panorama may be (docs/api.md: JPEG, HEIC, PNG), told by their bytes'
/// signature: the server refuses bytes that are not their Content-Type (415), the client an
/// image that is not what its name says. One definition for both.
public enum PanoramaImageFormat: String, Sendable, CaseIterable {
    case jpeg = "JPEG", png = "PNG", heic = "HEIC"

    public var contentType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .heic: return "image/heic"
        }
    }

    /// The format of a file's first bytes (12 are enough): JPEG FF D8 FF; PNG its 8-byte
    /// signature; HEIC an ISO BMFF `ftyp` box whose major brand is a HEIF one.
    public init?(signature head: some Collection<UInt8>) {
        let head = Array(head.prefix(12))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if head.count == 12, Array(head[4..<8]) == Array("ftyp".utf8),
                  Self.heifBrands.contains(String(decoding: head[8..<12], as: UTF8.self)) {
            self = .heic
        } else {
            return nil
        }
    }

    /// The format a file name's extension claims, nil for any other extension.
    public init?(fileName: String) {
        switch (fileName as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "heic", "heif": self = .heic
        default: return nil
        }
    }

    private static let heifBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs", "mif1", "msf1"]
}
