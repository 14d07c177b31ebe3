/// The first bytes of each image format a panorama may be: the signature and a header with
/// the image's dimensions, as the client's content check and the server's signature check
/// read them (the rest of a test image can be anything).
public enum ImageSignature {
    /// SOI, then a baseline frame header (SOF0) of 4096×2048, three components.
    public static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x08, 0x00, 0x10, 0x00, 0x03,
                                       0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
    /// The signature, then the IHDR chunk of 4096×2048 (8-bit RGB).
    public static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D]
        + Array("IHDR".utf8) + [0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x08, 0x00, 0x08, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
    /// An `ftyp` box of brand heic, then meta/iprp/ipco/ispe of 4096×2048.
    public static let heic: [UInt8] = [0x00, 0x00, 0x00, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
        + [0x00, 0x00, 0x00, 0x30] + Array("meta".utf8) + [0, 0, 0, 0]
        + [0x00, 0x00, 0x00, 0x24] + Array("iprp".utf8)
        + [0x00, 0x00, 0x00, 0x1C] + Array("ipco".utf8)
        + [0x00, 0x00, 0x00, 0x14] + Array("ispe".utf8) + [0, 0, 0, 0] + [0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x08, 0x00]

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
