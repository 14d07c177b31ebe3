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

    private static func check(_ error: heif_error, _ what: String) throws {
        guard error.code != heif_error_Ok else { return }
        throw Failure(description: "libheif: \(what): \(error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)")")
    }
}
