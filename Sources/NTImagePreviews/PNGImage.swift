import CNTPNG

/// PNG images, with libpng's simplified API: its errors come back as values (libpng's own
/// longjmp never crosses a Swift frame). A PNG has no scaled decoding: it is decoded whole,
/// to 8-bit RGB (16-bit channels reduced, a palette expanded, alpha composed onto black, or white for a logo), so
/// its budget is its pixels' bytes and libpng's row buffers, known from the header.
enum PNGImage {
    /// The size its header declares, read without decoding.
    static func size(_ source: UnsafeRawBufferPointer) throws(PreviewError) -> Image {
        let read = try Read(source)
        return Image(width: Int(read.image.pointee.width), height: Int(read.image.pointee.height))
    }

    /// What decoding a `size` PNG takes at most: its RGB pixels, and libpng's rows (the
    /// widest, 16-bit RGBA, twice) and inflate window.
    static func decodingBytes(_ size: Image) -> Int {
        size.width * size.height * 3 + 2 * size.width * 8 + (256 << 10)
    }

    /// The image as RGB rows, checked to be the `size` its header said.
    static func rgb(_ source: UnsafeRawBufferPointer, _ size: Image, matte: Matte = .black) throws(PreviewError) -> RGBRows {
        let read = try Read(source)
        guard Int(read.image.pointee.width) == size.width, Int(read.image.pointee.height) == size.height else {
            throw PreviewError("the PNG's header changed between reads")
        }
        read.image.pointee.format = UInt32(PNG_FORMAT_RGB)
        // A 16-bit file that says nothing of its encoding (no gAMA, sRGB, iCCP or cHRM) is sRGB,
        // as browsers read it: libpng's simplified API would take it as linear, far too light.
        read.image.pointee.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: size.width * size.height * 3)
        let rows = RGBRows(size: size, base: pixels, stride: size.width * 3) { pixels.deallocate() }
        // Always a colour: without one, libpng composes onto what the buffer held (memory not
        // yet written: another image's pixels could show through a transparent one's).
        let level: UInt8 = matte == .white ? 255 : 0
        var background = png_color(red: level, green: level, blue: level)
        guard png_image_finish_read(read.image, &background, pixels, 0, nil) != 0 else { throw PreviewError("the PNG cannot be decoded: \(read.message)") }
        return rows
    }

    /// One read of a PNG. Its `png_image` stays at one address from the header to the last
    /// row: libpng's error handler is given that address when the read begins.
    private final class Read {
        let image = UnsafeMutablePointer<png_image>.allocate(capacity: 1)

        init(_ source: UnsafeRawBufferPointer) throws(PreviewError) {
            image.initialize(to: png_image())
            image.pointee.version = UInt32(PNG_IMAGE_VERSION)
            guard let base = source.baseAddress, !source.isEmpty else { throw PreviewError("an empty file is not a PNG") }
            guard png_image_begin_read_from_memory(image, base, source.count) != 0 else {
                throw PreviewError("not a readable PNG: \(message)")
            }
        }

        /// libpng's words for its last error.
        var message: String {
            withUnsafeBytes(of: image.pointee.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }

        // Frees what libpng still holds (nothing after a finished or failed read), then the struct.
        deinit {
            png_image_free(image)
            image.deallocate()
        }
    }
}
