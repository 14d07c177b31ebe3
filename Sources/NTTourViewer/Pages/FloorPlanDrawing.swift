#if canImport(Glibc)
import Glibc
#endif
import NTAPIModel
import NTFloorPlans

/// A floor plan as SVG: each room's outline a polygon linking to the room's page with its name
/// inside, the whole scaled to fit the drawing's width, and a scale bar in metres. Outlines are
/// the API's `[[x, y], …]` in metres, x to the right and y down the page.
struct FloorPlanDrawing {
    struct Room {
        var id: String
        var name: String
        var points: [(x: Double, y: Double)]
    }

    /// The drawing's width in CSS pixels, and the margin around the rooms.
    static let width = 800.0
    static let margin = 24.0
    /// Room for the scale bar under the plan.
    static let footer = 40.0

    let rooms: [Room]
    /// Pixels per metre.
    let scale: Double
    let minX: Double
    let minY: Double
    let height: Double

    init(rooms: [Room]) {
        self.rooms = rooms
        let xs = rooms.flatMap { $0.points.map(\.x) }
        let ys = rooms.flatMap { $0.points.map(\.y) }
        minX = xs.min() ?? 0
        minY = ys.min() ?? 0
        let spanX = max((xs.max() ?? 1) - minX, 0.01)
        let spanY = max((ys.max() ?? 1) - minY, 0.01)
        let inner = Self.width - 2 * Self.margin
        // As wide as the drawing, unless that makes a tall floor taller than it is wide.
        scale = min(inner / spanX, (inner * 1.25) / spanY)
        height = spanY * scale + 2 * Self.margin + Self.footer
    }

    /// The rooms of a floor with their outlines read; an outline that does not read is left
    /// out (the API stored only valid ones).
    init(_ rooms: [RoomDocument]) {
        self.init(rooms: rooms.compactMap { room in
            guard let points = PlanGeometry.points(room.outline), points.count >= 3 else { return nil }
            return Room(id: room.id, name: room.name ?? "Room", points: points)
        })
    }

    func pixel(_ point: (x: Double, y: Double)) -> (x: Double, y: Double) {
        ((point.x - minX) * scale + Self.margin, (point.y - minY) * scale + Self.margin)
    }

    /// The scale bar: the round length closest to a sixth of the drawing, in metres or feet.
    func scaleBar(_ units: MeasureUnits) -> ScaleBar {
        ScaleBar(near: Self.width / 6 / scale, units: units)
    }

    /// A panorama on the plan: a dot linking to it; the current one with the cone of its view
    /// (pointing up the page until the script turns it to the view's heading).
    struct Mark {
        var position: PanoramaPosition
        /// Its image's heading: the upload's, else its file's.
        var heading: Double?
        var url: String
        var label: String
        var current: Bool
    }

    /// How big its text and dots are drawn, in the drawing's units: on a page the plan is about
    /// as wide as its 800 units (on a phone twice the screen, about 700 px), so a dot is 14
    /// units across to be 24 px or more (WCAG 2.2's target size); in the panel about 330 CSS px,
    /// so a dot there is 32 units and its text 30 to be read.
    struct Look {
        var fontSize: Double
        var dotRadius: Double
        var currentRadius: Double
        /// The current dot's view cone.
        var coneRadius: Double

        static let page = Look(fontSize: 13, dotRadius: 14, currentRadius: 16, coneRadius: 90)
        static let panel = Look(fontSize: 30, dotRadius: 32, currentRadius: 34, coneRadius: 130)
    }

    /// The view cone's half-angle at the viewer's first field of view.
    static let coneHalfAngle = 37.5

    /// The rooms' areas together.
    var totalArea: Double { rooms.reduce(0) { $0 + RoomMeasure($1.points).area } }

    /// Each room's name with its area under it, in `units`.
    func write(into page: inout HTMLWriter, roomURL: (String) -> String, marks: [Mark] = [], units: MeasureUnits, look: Look = .page) {
        page.raw("<svg class=\"plan\" xmlns=\"http://www.w3.org/2000/svg\" role=\"group\" aria-label=\"Floor plan\" font-size=\"")
        page.text(Numerals.decimal(look.fontSize, places: 0))
        page.raw("\" viewBox=\"0 0 ")
        page.text(Numerals.decimal(Self.width, places: 0))
        page.raw(" ")
        page.text(Numerals.decimal(height, places: 0))
        page.raw("\" width=\"")
        page.text(Numerals.decimal(Self.width, places: 0))
        page.raw("\" height=\"")
        page.text(Numerals.decimal(height, places: 0))
        page.raw("\">")
        let dots = marks.map { pixel(($0.position.x, $0.position.y)) }
        var taken: [PlanBox] = []
        for room in rooms {
            let area = RoomMeasure.area(RoomMeasure(room.points).area, in: units)
            let corners = room.points.map(pixel)
            let centre = PlanGeometry.labelPlace(centre: pixel(PlanGeometry.centroid(room.points)), lines: [room.name, area], fontSize: look.fontSize,
                                                 dotRadius: look.dotRadius, within: PlanBox(around: corners),
                                                 drawing: PlanBox(left: 0, top: 0, right: Self.width, bottom: height), dots: dots, taken: taken)
            taken.append(PlanGeometry.labelBox(at: centre, lines: [room.name, area], fontSize: look.fontSize))
            page.raw("<a href=\"")
            page.text(roomURL(room.id))
            page.raw("\" class=\"room\" data-room=\"")
            page.text(room.id)
            page.raw("\"><title>")
            page.text(room.name)
            page.raw("</title><polygon points=\"")
            for (index, point) in room.points.enumerated() {
                let pixel = pixel(point)
                if index > 0 { page.raw(" ") }
                page.text(Numerals.decimal(pixel.x, places: 1))
                page.raw(",")
                page.text(Numerals.decimal(pixel.y, places: 1))
            }
            page.raw("\"/><text x=\"")
            page.text(Numerals.decimal(centre.x, places: 1))
            page.raw("\" y=\"")
            page.text(Numerals.decimal(centre.y, places: 1))
            page.raw("\" text-anchor=\"middle\" dominant-baseline=\"middle\">")
            page.text(room.name)
            page.raw("<tspan class=\"area\" x=\"")
            page.text(Numerals.decimal(centre.x, places: 1))
            page.raw("\" dy=\"1.2em\">")
            page.text(area)
            page.raw("</tspan></text></a>")
        }
        if !marks.isEmpty { writeMarks(marks, look: look, into: &page) }
        let bar = scaleBar(units)
        let length = bar.metres * scale
        let y = height - Self.footer / 2
        let x = Self.margin
        page.raw("<g class=\"scale\"><path d=\"M")
        page.text(Numerals.decimal(x, places: 1))
        page.raw(" ")
        page.text(Numerals.decimal(y - 5, places: 1))
        page.raw("v5h")
        page.text(Numerals.decimal(length, places: 1))
        page.raw("v-5\"/><text x=\"")
        page.text(Numerals.decimal(x + length + 8, places: 1))
        page.raw("\" y=\"")
        page.text(Numerals.decimal(y, places: 1))
        page.raw("\" dominant-baseline=\"middle\">")
        page.text(bar.label)
        page.raw("</text></g></svg>")
    }

    private func writeMarks(_ marks: [Mark], look: Look, into page: inout HTMLWriter) {
        page.raw("<g class=\"spots\">")
        // The current one last: drawn over the others.
        for mark in marks.filter({ !$0.current }) + marks.filter(\.current) {
            let pixel = pixel((mark.position.x, mark.position.y))
            page.raw(mark.current ? "<g class=\"spot current\" transform=\"translate(" : "<a class=\"spot\" transform=\"translate(")
            page.text(Numerals.decimal(pixel.x, places: 1))
            page.raw(" ")
            page.text(Numerals.decimal(pixel.y, places: 1))
            if mark.current {
                page.raw(")\"><title>You are here: ")
                page.text(mark.label)
                page.raw("</title>")
                if let heading = mark.heading {
                    let r = look.coneRadius, a = Self.coneHalfAngle * .pi / 180
                    page.raw("<path class=\"cone\" data-radius=\"")
                    page.text(Numerals.decimal(r, places: 0))
                    page.raw("\" transform=\"rotate(")
                    page.text(Numerals.decimal(heading, places: 1))
                    page.raw(")\" d=\"M0 0L")
                    page.text(Numerals.decimal(-r * sin(a), places: 1))
                    page.raw(" ")
                    page.text(Numerals.decimal(-r * cos(a), places: 1))
                    page.raw("A")
                    page.text(Numerals.decimal(r, places: 1))
                    page.raw(" ")
                    page.text(Numerals.decimal(r, places: 1))
                    page.raw(" 0 0 1 ")
                    page.text(Numerals.decimal(r * sin(a), places: 1))
                    page.raw(" ")
                    page.text(Numerals.decimal(-r * cos(a), places: 1))
                    page.raw("Z\"/>")
                }
                page.raw("<circle r=\"")
                page.text(Numerals.decimal(look.currentRadius, places: 0))
                page.raw("\"/></g>")
            } else {
                page.raw(")\" href=\"")
                page.text(mark.url)
                page.raw("\" aria-label=\"Go to ")
                page.text(mark.label)
                page.raw("\"><title>")
                page.text(mark.label)
                page.raw("</title><circle r=\"")
                page.text(Numerals.decimal(look.dotRadius, places: 0))
                page.raw("\"/></a>")
            }
        }
        page.raw("</g>")
    }
}
