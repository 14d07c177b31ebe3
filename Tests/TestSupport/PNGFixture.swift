import CNTPNG

/// PNGs for tests, written with libpng's simplified API.
public enum PNGFixture {
    /// An RGB PNG whose pixel at (x, y) is `pixel(x, y)`.
    public static func make(width: Int, height: Int, pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        write(width: width, height: height, channels: 3) { x, y in
            let (red, green, blue) = pixel(x, y)
            return [red, green, blue]
        }
    }

    /// An RGBA PNG whose pixel at (x, y) is `pixel(x, y)` (its alpha last: 0 transparent).
    public static func withAlpha(width: Int, height: Int, pixel: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        write(width: width, height: height, channels: 4) { x, y in
            let (red, green, blue, alpha) = pixel(x, y)
            return [red, green, blue, alpha]
        }
    }

    private static func write(width: Int, height: Int, channels: Int, pixel: (Int, Int) -> [UInt8]) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                for (channel, value) in pixel(x, y).enumerated() { pixels[(y * width + x) * channels + channel] = value }
            }
        }
        // One address for the whole write: libpng's error handler is given it.
        let image = UnsafeMutablePointer<png_image>.allocate(capacity: 1)
        defer { image.deallocate() }
        image.initialize(to: png_image())
        image.pointee.version = UInt32(PNG_IMAGE_VERSION)
        image.pointee.width = UInt32(width)
        image.pointee.height = UInt32(height)
        image.pointee.format = UInt32(channels == 4 ? PNG_FORMAT_RGB | PNG_FORMAT_FLAG_ALPHA : PNG_FORMAT_RGB)
        var size = 0
        _ = pixels.withUnsafeBytes { png_image_write_to_memory(image, nil, &size, 0, $0.baseAddress, 0, nil) }
        var bytes = [UInt8](repeating: 0, count: size)
        let written = bytes.withUnsafeMutableBytes { out in
            pixels.withUnsafeBytes { png_image_write_to_memory(image, out.baseAddress, &size, 0, $0.baseAddress, 0, nil) }
        }
        precondition(written != 0, "libpng could not write the test's PNG")
        return Array(bytes.prefix(size))
    }

    /// A PNG whose header claims `width` × `height` RGB pixels and whose data is a few bytes
    /// (a decompression bomb's header: what a server must refuse before it decodes).
    /// A PNG's width and height, from its IHDR; nil when it is no PNG.
    public static func size(_ png: [UInt8]) -> (width: Int, height: Int)? {
        guard png.count >= 24, png.starts(with: [0x89, 0x50, 0x4e, 0x47]) else { return nil }
        let number = { (at: Int) in png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (number(16), number(20))
    }

    public static func claiming(width: Int, height: Int) -> [UInt8] {
        var header: [UInt8] = []
        for value in [UInt32(width), UInt32(height)] { header += withUnsafeBytes(of: value.bigEndian, Array.init) }
        header += [8, 2, 0, 0, 0] // 8 bits, RGB, deflate, no filter method, not interlaced
        // A zlib stream of one empty stored block: valid, and far short of the rows claimed.
        let data: [UInt8] = [0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01]
        return [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + chunk("IHDR", header) + chunk("IDAT", data) + chunk("IEND", [])
    }

    /// `png` with an `iTXt` chunk of XMP (keyword `XML:com.adobe.xmp`, uncompressed) after its header.
    public static func tagged(_ png: [UInt8], xmp: String) -> [UInt8] {
        let header = 8 + 25 // the signature, then IHDR's length, type, 13 bytes and CRC
        let text = Array("XML:com.adobe.xmp".utf8) + [0, 0, 0, 0, 0] + Array(xmp.utf8)
        return Array(png.prefix(header)) + chunk("iTXt", text) + png.dropFirst(header)
    }

    /// A 16-bit greyish RGB PNG of `value` in every sample (`0x2828`: 40 of 255), with no
    /// `gAMA`, `sRGB`, `iCCP` or `cHRM`: a file that says nothing of its encoding, as most
    /// tools write one (browsers and Pillow take it as sRGB).
    public static func sixteenBit(width: Int, height: Int, value: UInt16) -> [UInt8] {
        var header: [UInt8] = []
        for size in [UInt32(width), UInt32(height)] { header += withUnsafeBytes(of: size.bigEndian, Array.init) }
        header += [16, 2, 0, 0, 0] // 16 bits, RGB, deflate, no filter method, not interlaced
        let sample = withUnsafeBytes(of: value.bigEndian, Array.init)
        var rows: [UInt8] = []
        for _ in 0..<height { rows += [0] + Array([[UInt8]](repeating: sample, count: width * 3).joined()) } // filter type 0 each row
        // A zlib stream of stored (uncompressed) deflate blocks, and its Adler-32.
        var stream: [UInt8] = [0x78, 0x01]
        var at = 0
        repeat {
            let count = min(65_535, rows.count - at)
            let last: UInt8 = at + count == rows.count ? 1 : 0
            stream += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)] + rows[at..<at + count]
            at += count
        } while at < rows.count
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in rows { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        stream += withUnsafeBytes(of: (b << 16 | a).bigEndian, Array.init)
        return [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + chunk("IHDR", header) + chunk("IDAT", stream) + chunk("IEND", [])
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return withUnsafeBytes(of: UInt32(data.count).bigEndian, Array.init) + body + withUnsafeBytes(of: crc32(body).bigEndian, Array.init)
    }

    /// CRC-32 (ISO 3309), as PNG chunks carry it.
    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xedb8_8320 : crc >> 1 }
        }
        return crc ^ 0xffff_ffff
    }
}
