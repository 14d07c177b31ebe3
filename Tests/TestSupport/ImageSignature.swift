/// The first bytes toursd tells a panorama's type by (it refuses others with 415): test
/// "images" start with the signature of the type their name or Content-Type declares.
public enum ImageSignature {
    public static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
    public static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    public static let heic: [UInt8] = [0x00, 0x00, 0x00, 0x18] + Array("ftypheic".utf8)

    /// The signature of a file named `name` (by its extension; a JPEG's when unknown).
    public static func forFile(named name: String) -> [UInt8] {
        let lowered = name.lowercased()
        if lowered.hasSuffix(".png") { return png }
        if lowered.hasSuffix(".heic") { return heic }
        return jpeg
    }

    /// `bytes` with their start replaced by the signature for `name`.
    public static func stamped(_ bytes: [UInt8], as name: String) -> [UInt8] {
        let signature = forFile(named: name)
        var stamped = bytes
        stamped.replaceSubrange(0..<min(signature.count, bytes.count), with: signature.prefix(bytes.count))
        return stamped
    }
}
