import NTFloorPlans
@testable import NTHTTPCore
@testable import NTImagePreviews
@testable import NTTourViewer

// libFuzzer target: what the tour viewer takes from outside. A form body and a Cookie header
// (either parses or is refused, never a crash); any text escaped for HTML (no character that
// could start markup or end an attribute survives); any text as a room's outline and name on
// a floor page (the name appears only escaped); any bytes as a JPEG to preview (an error or a
// JPEG, never a crash, with a small pixel budget so a hostile header costs nothing).
public func fuzzViewerInputs(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let text = String(decoding: bytes, as: UTF8.self)
    if let form = try? FormFields(bytes) {
        precondition(form.values.keys.allSatisfy { form[$0] != nil }, "a form field that cannot be read back")
    }
    _ = Cookies(text)
    let escaped = MarkupEscaping.escape(text)
    precondition(!escaped.contains(where: { "<>\"'".contains($0) }), "markup survived escaping")
    let outline = PlanGeometry.points(text) ?? []
    precondition(outline.allSatisfy { $0.x.isFinite && $0.y.isFinite }, "an outline point that is not a number")
    let square: [(x: Double, y: Double)] = [(0, 0), (4, 0), (4, 3), (0, 3)]
    // The same drawing with the text as a room's name and with a plain name: the name may add
    // no markup (as many '<' and '"' either way) and must be there, escaped.
    let points = outline.count >= 3 ? outline : square
    let svg = { (name: String) -> String in
        var page = HTMLWriter()
        FloorPlanDrawing(rooms: [FloorPlanDrawing.Room(id: "r", name: name, points: points)]).write(into: &page, roomURL: { _ in "/app/rooms/r" }, units: .imperial)
        return page.html
    }
    let named = svg(text), plain = svg("x")
    for mark: Character in ["<", "\""] {
        precondition(named.filter { $0 == mark }.count == plain.filter { $0 == mark }.count, "a room name added markup to the SVG")
    }
    precondition(named.contains(">" + escaped + "<tspan class=\"area\""), "a room name missing from the SVG")
    if let preview = try? JPEGPreview.make(from: bytes, width: 64, quality: 50, maxSourcePixels: 1 << 20) {
        precondition(JPEGPreview.dimensions(of: preview) != nil, "a preview that is not a JPEG")
    }
    return 0
}
