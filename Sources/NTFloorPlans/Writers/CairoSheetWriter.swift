#if canImport(Glibc)
import Glibc
#endif
import CNTCairo
import CNTTurboJPEG

/// Why a sheet could not be written.
public struct FloorPlanError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Sheets through cairo (Debian's libcairo2): a PDF of one page per sheet, its fonts (DejaVu
/// Sans, through fontconfig) embedded as subsets and its text extractable; or one sheet as a
/// PNG of a chosen width. The logo goes into the PDF as its own JPEG.
public enum CairoSheetWriter {
    /// The font every sheet is set in (Debian's fonts-dejavu-core; fontconfig finds a like one
    /// when it is missing).
    static let family = "DejaVu Sans"

    public static func pdf(_ sheets: [Sheet], title: String) throws(FloorPlanError) -> [UInt8] {
        let sink = Sink()
        let first = sheets.first ?? Sheet(width: 595.28, height: 841.89, marks: [])
        guard let surface = cairo_pdf_surface_create_for_stream(Sink.write, Unmanaged.passUnretained(sink).toOpaque(), first.width, first.height) else {
            throw FloorPlanError("cairo could not make a PDF surface")
        }
        defer { cairo_surface_destroy(surface) }
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title)
        guard let cr = cairo_create(surface) else { throw FloorPlanError("cairo could not make a context") }
        defer { cairo_destroy(cr) }
        var images = ImageCache()
        defer { images.destroy() }
        for sheet in sheets.isEmpty ? [first] : sheets {
            cairo_pdf_surface_set_size(surface, sheet.width, sheet.height)
            for mark in sheet.marks { draw(mark, cr, images: &images, forPDF: true) }
            cairo_show_page(cr)
        }
        try check(cairo_status(cr))
        cairo_surface_finish(surface)
        try check(cairo_surface_status(surface))
        return sink.bytes
    }

    /// The bytes a PNG `width` pixels wide of a page of `page`'s size holds while it is drawn.
    public static func pngMemory(_ page: (width: Double, height: Double), width: Int) -> Int {
        let height = pngHeight(page, width: width)
        return width * height * 4 + 2 * width * 4 * 16 // the image, and libpng's rows
    }

    static func pngHeight(_ page: (width: Double, height: Double), width: Int) -> Int {
        max(1, Int((Double(width) * page.height / max(page.width, 1)).rounded()))
    }

    public static func png(_ sheet: Sheet, width: Int) throws(FloorPlanError) -> [UInt8] {
        let height = pngHeight((sheet.width, sheet.height), width: width)
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height)) else {
            throw FloorPlanError("cairo could not make a \(width) × \(height) image")
        }
        defer { cairo_surface_destroy(surface) }
        try check(cairo_surface_status(surface))
        guard let cr = cairo_create(surface) else { throw FloorPlanError("cairo could not make a context") }
        defer { cairo_destroy(cr) }
        cairo_set_source_rgb(cr, 1, 1, 1)
        cairo_paint(cr)
        cairo_scale(cr, Double(width) / sheet.width, Double(height) / sheet.height)
        var images = ImageCache()
        defer { images.destroy() }
        for mark in sheet.marks { draw(mark, cr, images: &images, forPDF: false) }
        try check(cairo_status(cr))
        cairo_surface_flush(surface)
        let sink = Sink()
        try check(cairo_surface_write_to_png_stream(surface, Sink.write, Unmanaged.passUnretained(sink).toOpaque()))
        return sink.bytes
    }

    private static func check(_ status: cairo_status_t) throws(FloorPlanError) {
        guard status == CAIRO_STATUS_SUCCESS else { throw FloorPlanError("cairo: " + String(cString: cairo_status_to_string(status))) }
    }

    private static func draw(_ mark: SheetMark, _ cr: OpaquePointer, images: inout ImageCache, forPDF: Bool) {
        switch mark {
        case .polygon(let points, let fill, let stroke, let width):
            trace(points, cr, closed: true)
            if let fill {
                colour(fill, cr)
                if stroke != nil && width > 0 { cairo_fill_preserve(cr) } else { cairo_fill(cr) }
            }
            if let stroke, width > 0 {
                colour(stroke, cr)
                cairo_set_line_width(cr, width)
                cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER)
                cairo_stroke(cr)
            }
            cairo_new_path(cr)
        case .line(let points, let stroke, let width):
            trace(points, cr, closed: false)
            colour(stroke, cr)
            cairo_set_line_width(cr, width)
            cairo_stroke(cr)
        case .text(let text, let at, let size, let bold, let anchor, let ink):
            cairo_select_font_face(cr, family, CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
            cairo_set_font_size(cr, size)
            var extents = cairo_text_extents_t(), font = cairo_font_extents_t()
            cairo_text_extents(cr, text, &extents)
            cairo_font_extents(cr, &font)
            let x = switch anchor {
            case .start: at.x
            case .middle: at.x - extents.x_advance / 2
            case .end: at.x - extents.x_advance
            }
            colour(ink, cr)
            cairo_move_to(cr, x, at.y + (font.ascent - font.descent) / 2)
            cairo_show_text(cr, text)
            cairo_new_path(cr)
        case .image(let jpeg, let box):
            guard let image = images.surface(jpeg, attachingJPEG: forPDF) else { return }
            cairo_save(cr)
            cairo_translate(cr, box.left, box.top)
            cairo_scale(cr, box.width / Double(image.width), box.height / Double(image.height))
            cairo_set_source_surface(cr, image.surface, 0, 0)
            cairo_paint(cr)
            cairo_restore(cr)
        case .room(_, let marks):
            for mark in marks { draw(mark, cr, images: &images, forPDF: forPDF) }
        }
    }

    private static func trace(_ points: [PlanPoint], _ cr: OpaquePointer, closed: Bool) {
        guard let first = points.first else { return }
        cairo_move_to(cr, first.x, first.y)
        for point in points.dropFirst() { cairo_line_to(cr, point.x, point.y) }
        if closed { cairo_close_path(cr) }
    }

    private static func colour(_ colour: SheetColour, _ cr: OpaquePointer) {
        cairo_set_source_rgb(cr, Double(colour.red) / 255, Double(colour.green) / 255, Double(colour.blue) / 255)
    }

    /// Bytes cairo writes, gathered.
    private final class Sink {
        var bytes: [UInt8] = []

        static let write: cairo_write_func_t = { closure, data, length in
            guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
            let sink = Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue()
            sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
            return CAIRO_STATUS_SUCCESS
        }
    }

    /// The sheets' JPEGs decoded once each (a PDF's every page carries the same logo).
    private struct ImageCache {
        struct Decoded {
            let surface: OpaquePointer
            let width: Int
            let height: Int
        }

        private var decoded: [[UInt8]: Decoded] = [:]

        mutating func surface(_ jpeg: [UInt8], attachingJPEG: Bool) -> Decoded? {
            if let known = decoded[jpeg] { return known }
            guard let made = Self.decode(jpeg, attachingJPEG: attachingJPEG) else { return nil }
            decoded[jpeg] = made
            return made
        }

        /// The JPEG's pixels as a cairo image; in a PDF, the JPEG itself goes in its place.
        private static func decode(_ jpeg: [UInt8], attachingJPEG: Bool) -> Decoded? {
            guard let handle = tjInitDecompress() else { return nil }
            defer { tjDestroy(handle) }
            var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = 0
            let read = jpeg.withUnsafeBufferPointer { tjDecompressHeader3(handle, $0.baseAddress, UInt(jpeg.count), &width, &height, &subsampling, &colourspace) }
            // A logo is at most `logoWidth` (2,048) wide, as branding keeps it.
            guard read == 0, width > 0, height > 0, width <= 4096, height <= 4096,
                  let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height) else { return nil }
            cairo_surface_flush(surface)
            let stride = cairo_image_surface_get_stride(surface)
            guard let pixels = cairo_image_surface_get_data(surface),
                  jpeg.withUnsafeBufferPointer({ tjDecompress2(handle, $0.baseAddress, UInt(jpeg.count), pixels, width, stride, height, Int32(TJPF_BGRX.rawValue), 0) }) == 0 else {
                cairo_surface_destroy(surface)
                return nil
            }
            cairo_surface_mark_dirty(surface)
            if attachingJPEG, let copy = malloc(jpeg.count) {
                jpeg.withUnsafeBytes { _ = memcpy(copy, $0.baseAddress!, jpeg.count) }
                cairo_surface_set_mime_data(surface, "image/jpeg", copy.assumingMemoryBound(to: UInt8.self), UInt(jpeg.count), free, copy)
            }
            return Decoded(surface: surface, width: Int(width), height: Int(height))
        }

        func destroy() {
            for image in decoded.values { cairo_surface_destroy(image.surface) }
        }
    }
}
