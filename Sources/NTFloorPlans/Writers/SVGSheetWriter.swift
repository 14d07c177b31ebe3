import NTHashing

/// A sheet as an SVG document, written directly: its size in points, each room a group named
/// by its `<title>`, text as text (a listing site's reader, a search engine and `pdftotext`'s
/// cousins read it), the logo inlined as a data URL (an SVG that stands alone).
public enum SVGSheetWriter {
    public static func svg(_ sheet: Sheet, title: String) -> [UInt8] {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" viewBox=\"0 0 \(number(sheet.width)) \(number(sheet.height))\" "
        out += "width=\"\(number(sheet.width))pt\" height=\"\(number(sheet.height))pt\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">"
        out += "<title>\(escaped(title))</title>"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>"
        for mark in sheet.marks { write(mark, into: &out) }
        out += "</svg>\n"
        return Array(out.utf8)
    }

    private static func write(_ mark: SheetMark, into out: inout String) {
        switch mark {
        case .polygon(let points, let fill, let stroke, let width):
            out += "<polygon points=\"\(path(points))\" fill=\"\(fill?.hex ?? "none")\""
            if let stroke, width > 0 { out += " stroke=\"\(stroke.hex)\" stroke-width=\"\(number(width))\" stroke-linejoin=\"miter\"" }
            out += "/>"
        case .line(let points, let stroke, let width):
            out += "<polyline points=\"\(path(points))\" fill=\"none\" stroke=\"\(stroke.hex)\" stroke-width=\"\(number(width))\"/>"
        case .text(let text, let at, let size, let bold, let anchor, let colour):
            out += "<text x=\"\(number(at.x))\" y=\"\(number(at.y))\" font-size=\"\(number(size))\"\(bold ? " font-weight=\"bold\"" : "")"
            out += " text-anchor=\"\(anchor.rawValue)\" dominant-baseline=\"central\" fill=\"\(colour.hex)\">\(escaped(text))</text>"
        case .image(let jpeg, let box):
            out += "<image x=\"\(number(box.left))\" y=\"\(number(box.top))\" width=\"\(number(box.width))\" height=\"\(number(box.height))\" "
            out += "href=\"data:image/jpeg;base64,\(ByteEncoding.base64(jpeg))\"/>"
        case .room(let name, let marks):
            out += "<g class=\"room\"><title>\(escaped(name))</title>"
            for mark in marks { write(mark, into: &out) }
            out += "</g>"
        }
    }

    private static func path(_ points: [PlanPoint]) -> String {
        points.map { "\(number($0.x)),\(number($0.y))" }.joined(separator: " ")
    }

    private static func number(_ value: Double) -> String { Numerals.decimal(value, places: 2) }

    /// Escaped as markup, without the control characters XML 1.0 has no place for.
    static func escaped(_ text: String) -> String {
        MarkupEscaping.escape(String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 || $0 == "\t" })))
    }
}
