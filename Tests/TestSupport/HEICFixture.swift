import CNTHeif
import Foundation

/// HEICs for tests, encoded with libheif and its HEVC encoder (x265), as an iPhone's camera
/// writes them: one HEVC image in a HEIF container.
public enum HEICFixture {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// An image whose pixel at (x, y) is `pixel(x, y)`, at `quality` (lossy: colours come back
    /// near, not equal), with `xmp` as its metadata when given.
    public static func make(width: Int, height: Int, quality: Int = 90, xmp: String? = nil, pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) throws -> [UInt8] {
        guard let context = heif_context_alloc() else { throw Failure(description: "libheif cannot start") }
        defer { heif_context_free(context) }
        var encoder: OpaquePointer?
        try check(heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder), "no HEVC encoder")
        defer { heif_encoder_release(encoder) }
        try check(heif_encoder_set_lossy_quality(encoder, Int32(quality)), "quality")
        var image: OpaquePointer?
        try check(heif_image_create(Int32(width), Int32(height), heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image), "image")
        defer { heif_image_release(image) }
        try check(heif_image_add_plane(image, heif_channel_interleaved, Int32(width), Int32(height), 8), "plane")
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane(image, heif_channel_interleaved, &stride) else { throw Failure(description: "no plane") }
        for y in 0..<height {
            for x in 0..<width {
                let (red, green, blue) = pixel(x, y)
                let at = y * Int(stride) + x * 3
                (plane[at], plane[at + 1], plane[at + 2]) = (red, green, blue)
            }
        }
        var handle: OpaquePointer?
        try check(heif_context_encode_image(context, image, encoder, nil, &handle), "encode")
        defer { heif_image_handle_release(handle) }
        if let xmp {
            let bytes = Array(xmp.utf8)
            try check(heif_context_add_XMP_metadata(context, handle, bytes, Int32(bytes.count)), "XMP")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fixture-\(UUID().uuidString).heic").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try check(heif_context_write_to_file(context, file), "write")
        return Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    /// A HEIC whose container says it holds `items` images (a grid of that many tiles) and
    /// holds nothing else: what a server must refuse from the header, before any decoder reads it.
    public static func claiming(items: Int) -> [UInt8] {
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
            withUnsafeBytes(of: UInt32(8 + body.count).bigEndian, Array.init) + Array(type.utf8) + body
        }
        let info = box("iinf", [1, 0, 0, 0] + withUnsafeBytes(of: UInt32(items).bigEndian, Array.init)) // version 1: a 32-bit count
        return box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)) + box("meta", [0, 0, 0, 0] + info)
    }

    /// A grid HEIC of one real `tile`-wide tile (HEVC, from `make`), whose grid says its image
    /// is `width` × `height` while its `ispe` claims `claimed` × `claimed`: what a decoder that
    /// obeys the grid allocates, and a budget read from `ispe` does not see.
    public static func grid(width: Int, height: Int, claimed: Int, tile: Int = 64) throws -> [UInt8] {
        let real = try make(width: tile, height: tile) { x, y in (UInt8(x % 256), UInt8(y % 256), 128) }
        let (configuration, coded) = try hevcItem(of: real)
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] { u32(8 + body.count) + Array(type.utf8) + body }
        func full(_ type: String, version: UInt8, flags: Int = 0, _ body: [UInt8]) -> [UInt8] {
            box(type, [version, UInt8(flags >> 16 & 0xFF), UInt8(flags >> 8 & 0xFF), UInt8(flags & 0xFF)] + body)
        }
        func ispe(_ width: Int, _ height: Int) -> [UInt8] { full("ispe", version: 0, u32(width) + u32(height)) }
        func infe(_ id: Int, _ type: String) -> [UInt8] { full("infe", version: 2, u16(id) + u16(0) + Array(type.utf8) + [0]) }
        let gridData: [UInt8] = [0, 1, 0, 0] + u32(width) + u32(height) // version, 32-bit fields, one row, one column
        let ftyp = box("ftyp", Array("heic".utf8) + u32(0) + Array("mif1heic".utf8))
        func meta(tileOffset: Int) -> [UInt8] {
            full("meta", version: 0,
                 full("hdlr", version: 0, u32(0) + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
                 + full("pitm", version: 0, u16(1))
                 // Version 1: 4-byte offsets and lengths, the grid's data in idat (construction method 1).
                 + full("iloc", version: 1, [0x44, 0x00] + u16(2)
                        + u16(1) + u16(1) + u16(0) + u16(1) + u32(0) + u32(gridData.count)
                        + u16(2) + u16(0) + u16(0) + u16(1) + u32(tileOffset) + u32(coded.count))
                 + full("iinf", version: 0, u16(2) + infe(1, "grid") + infe(2, "hvc1"))
                 + full("iref", version: 0, box("dimg", u16(1) + u16(1) + u16(2)))
                 + box("iprp", box("ipco", configuration + ispe(tile, tile) + ispe(claimed, claimed))
                       + full("ipma", version: 0, u32(2) + u16(1) + [1, 0x83] + u16(2) + [2, 0x81, 0x02]))
                 + box("idat", gridData))
        }
        let size = meta(tileOffset: 0).count
        return ftyp + meta(tileOffset: ftyp.count + size + 8) + box("mdat", coded)
    }

    /// The `hvcC` box and the coded bytes of the one image of a HEIC `make` wrote.
    private static func hevcItem(of file: [UInt8]) throws -> (configuration: [UInt8], coded: [UInt8]) {
        func boxes(_ range: Range<Int>) -> [(type: String, whole: Range<Int>, body: Range<Int>)] {
            var found: [(String, Range<Int>, Range<Int>)] = []
            var at = range.lowerBound
            while at + 8 <= range.upperBound {
                let size = Int(be(file, at, 4))
                guard size >= 8, at + size <= range.upperBound else { break }
                found.append((String(decoding: file[at + 4..<at + 8], as: UTF8.self), at..<at + size, at + 8..<at + size))
                at += size
            }
            return found
        }
        guard let meta = boxes(0..<file.count).first(where: { $0.type == "meta" }),
              let iprp = boxes(meta.body.lowerBound + 4..<meta.body.upperBound).first(where: { $0.type == "iprp" }),
              let ipco = boxes(iprp.body).first(where: { $0.type == "ipco" }),
              let hvcC = boxes(ipco.body).first(where: { $0.type == "hvcC" }),
              let iloc = boxes(meta.body.lowerBound + 4..<meta.body.upperBound).first(where: { $0.type == "iloc" }) else {
            throw Failure(description: "libheif's HEIC has no hvcC or iloc")
        }
        // libheif writes iloc version 0 or 1 with 4-byte offsets and lengths, and a base offset
        // of 4 bytes or none; its first item is the image.
        let at = iloc.body.lowerBound, version = file[at], baseSize = Int(file[at + 5] >> 4)
        guard file[at + 4] == 0x44, baseSize == 0 || baseSize == 4 else { throw Failure(description: "an iloc layout the fixture does not read") }
        let itemStart = at + 8 // version and flags, sizes, item count
        let baseAt = itemStart + 2 + (version == 1 ? 2 : 0) + 2 // the item's id, construction method, data reference
        let base = baseSize == 4 ? Int(be(file, baseAt, 4)) : 0
        let extentAt = baseAt + baseSize + 2
        let offset = base + Int(be(file, extentAt, 4)), length = Int(be(file, extentAt + 4, 4))
        guard offset + length <= file.count else { throw Failure(description: "libheif's HEIC places its image outside the file") }
        return (Array(file[hvcC.whole]), Array(file[offset..<offset + length]))
    }

    private static func be(_ bytes: [UInt8], _ at: Int, _ count: Int) -> UInt64 {
        bytes[at..<at + count].reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func u32(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).bigEndian, Array.init) }
    private static func u16(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt16(value).bigEndian, Array.init) }

    private static func check(_ error: heif_error, _ what: String) throws {
        guard error.code != heif_error_Ok else { return }
        throw Failure(description: "libheif: \(what): \(error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)")")
    }
}
