#if canImport(Glibc)
import Glibc
#endif
import NTAPIModel

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
            guard let points = Self.points(room.outline), points.count >= 3 else { return nil }
            return Room(id: room.id, name: room.name ?? "Room", points: points)
        })
    }

    static func points(_ outline: String) -> [(x: Double, y: Double)]? {
        guard let array = try? JSONReader.parse(outline).array else { return nil }
        var points: [(x: Double, y: Double)] = []
        for point in array {
            guard let pair = point.array, pair.count == 2, let x = pair[0].double, let y = pair[1].double, x.isFinite, y.isFinite else { return nil }
            points.append((x, y))
        }
        return points
    }

    func pixel(_ point: (x: Double, y: Double)) -> (x: Double, y: Double) {
        ((point.x - minX) * scale + Self.margin, (point.y - minY) * scale + Self.margin)
    }

    /// The area-weighted centre of a polygon; its vertices' mean when it has no area, or when
    /// the area-weighted centre falls outside the polygon's bounds (a self-crossing outline
    /// whose signed areas nearly cancel puts it arbitrarily far away).
    static func centroid(_ points: [(x: Double, y: Double)]) -> (x: Double, y: Double) {
        var area = 0.0, cx = 0.0, cy = 0.0
        for index in points.indices {
            let a = points[index], b = points[(index + 1) % points.count]
            let cross = a.x * b.y - b.x * a.y
            area += cross
            cx += (a.x + b.x) * cross
            cy += (a.y + b.y) * cross
        }
        let count = Double(points.count)
        let mean = (x: points.map(\.x).reduce(0, +) / count, y: points.map(\.y).reduce(0, +) / count)
        guard abs(area) > 1e-9 else { return mean }
        let centre = (x: cx / (3 * area), y: cy / (3 * area))
        let xs = points.map(\.x), ys = points.map(\.y)
        guard centre.x.isFinite, centre.y.isFinite, (xs.min()!...xs.max()!).contains(centre.x), (ys.min()!...ys.max()!).contains(centre.y) else {
            return mean
        }
        return centre
    }

    /// The scale bar: the round length closest to a sixth of the drawing, in metres or feet,
    /// its length in metres and its label.
    func scaleBar(_ units: MeasureUnits) -> (metres: Double, label: String) {
        let wanted = Self.width / 6 / scale
        switch units {
        case .metric:
            let metres = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].min { abs($0 - wanted) < abs($1 - wanted) } ?? 1
            return (metres, metres < 1 ? "50 cm" : "\(Int(metres)) m")
        case .imperial:
            let feet = [1.0, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000].min { abs($0 * 0.3048 - wanted) < abs($1 * 0.3048 - wanted) } ?? 1
            return (feet * 0.3048, "\(Int(feet)) ft")
        }
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

    /// A box in the drawing's units.
    struct Box {
        var left: Double, top: Double, right: Double, bottom: Double

        func meets(_ other: Box) -> Bool {
            left < other.right && other.left < right && top < other.bottom && other.top < bottom
        }

        /// Whether a circle comes within `gap` of it.
        func meets(circle centre: (x: Double, y: Double), radius: Double, gap: Double) -> Bool {
            let dx = max(left - centre.x, 0, centre.x - right), dy = max(top - centre.y, 0, centre.y - bottom)
            return (dx * dx + dy * dy).squareRoot() < radius + gap
        }
    }

    /// The box a room's label takes with its middle line at `at`: the name (`dominant-baseline`
    /// middle) and its area a line under it, each character taken as 0.62 em wide, a little
    /// wider than system-ui's average, so that a label clear here is clear as drawn.
    static func labelBox(at point: (x: Double, y: Double), lines: [String], fontSize: Double) -> Box {
        let width = Double(lines.map(\.count).max() ?? 0) * 0.62 * fontSize
        return Box(left: point.x - width / 2, top: point.y - 0.65 * fontSize, right: point.x + width / 2,
                   bottom: point.y + (Double(max(lines.count, 1) - 1) * 1.2 + 0.65) * fontSize)
    }

    /// Where a room's label goes: the room's centre, unless a dot (a panorama often stands in
    /// the middle of its room) or a label already placed lies there; then the nearest of a few
    /// places around it, down, up (three lines each way) and aside, that keeps its middle in the
    /// room's bounds, the whole label in the drawing, and is clear of both. The centre when none is.
    static func labelPlace(centre: (x: Double, y: Double), lines: [String], look: Look, within bounds: Box, drawing: Box? = nil,
                           dots: [(x: Double, y: Double)], taken: [Box]) -> (x: Double, y: Double) {
        let step = 0.6 * look.fontSize
        let width = labelBox(at: centre, lines: lines, fontSize: look.fontSize).right - centre.x
        var candidates: [(x: Double, y: Double)] = []
        for rung in 0..<13 {
            let dy = Double((rung + 1) / 2) * step * (rung.isMultiple(of: 2) ? 1 : -1)
            for dx in [0, -width, width] { candidates.append((centre.x + dx, centre.y + dy)) }
        }
        let clear = candidates.first { point in
            guard (bounds.left...bounds.right).contains(point.x), (bounds.top...bounds.bottom).contains(point.y) else { return false }
            let box = labelBox(at: point, lines: lines, fontSize: look.fontSize)
            if let drawing, box.left < drawing.left || box.right > drawing.right || box.top < drawing.top || box.bottom > drawing.bottom { return false }
            return !dots.contains { box.meets(circle: $0, radius: look.dotRadius, gap: 0.2 * look.fontSize) } && !taken.contains { box.meets($0) }
        }
        return clear ?? centre
    }

    /// The view cone's half-angle at the viewer's first field of view.
    static let coneHalfAngle = 37.5

    /// The rooms' areas together.
    var totalArea: Double { rooms.reduce(0) { $0 + RoomMeasure($1.points).area } }

    /// Each room's name with its area under it, in `units`.
    func write(into page: inout HTMLWriter, roomURL: (String) -> String, marks: [Mark] = [], units: MeasureUnits, look: Look = .page) {
        page.raw("<svg class=\"plan\" xmlns=\"http://www.w3.org/2000/svg\" role=\"group\" aria-label=\"Floor plan\" font-size=\"")
        page.text(Format.decimal(look.fontSize, places: 0))
        page.raw("\" viewBox=\"0 0 ")
        page.text(Format.decimal(Self.width, places: 0))
        page.raw(" ")
        page.text(Format.decimal(height, places: 0))
        page.raw("\" width=\"")
        page.text(Format.decimal(Self.width, places: 0))
        page.raw("\" height=\"")
        page.text(Format.decimal(height, places: 0))
        page.raw("\">")
        let dots = marks.map { pixel(($0.position.x, $0.position.y)) }
        var taken: [Box] = []
        for room in rooms {
            let area = RoomMeasure.area(RoomMeasure(room.points).area, in: units)
            let corners = room.points.map(pixel)
            let bounds = Box(left: corners.map(\.x).min() ?? 0, top: corners.map(\.y).min() ?? 0, right: corners.map(\.x).max() ?? 0, bottom: corners.map(\.y).max() ?? 0)
            let centre = Self.labelPlace(centre: pixel(Self.centroid(room.points)), lines: [room.name, area], look: look, within: bounds,
                                         drawing: Box(left: 0, top: 0, right: Self.width, bottom: height), dots: dots, taken: taken)
            taken.append(Self.labelBox(at: centre, lines: [room.name, area], fontSize: look.fontSize))
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
                page.text(Format.decimal(pixel.x, places: 1))
                page.raw(",")
                page.text(Format.decimal(pixel.y, places: 1))
            }
            page.raw("\"/><text x=\"")
            page.text(Format.decimal(centre.x, places: 1))
            page.raw("\" y=\"")
            page.text(Format.decimal(centre.y, places: 1))
            page.raw("\" text-anchor=\"middle\" dominant-baseline=\"middle\">")
            page.text(room.name)
            page.raw("<tspan class=\"area\" x=\"")
            page.text(Format.decimal(centre.x, places: 1))
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
        page.text(Format.decimal(x, places: 1))
        page.raw(" ")
        page.text(Format.decimal(y - 5, places: 1))
        page.raw("v5h")
        page.text(Format.decimal(length, places: 1))
        page.raw("v-5\"/><text x=\"")
        page.text(Format.decimal(x + length + 8, places: 1))
        page.raw("\" y=\"")
        page.text(Format.decimal(y, places: 1))
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
            page.text(Format.decimal(pixel.x, places: 1))
            page.raw(" ")
            page.text(Format.decimal(pixel.y, places: 1))
            if mark.current {
                page.raw(")\"><title>You are here: ")
                page.text(mark.label)
                page.raw("</title>")
                if let heading = mark.heading {
                    let r = look.coneRadius, a = Self.coneHalfAngle * .pi / 180
                    page.raw("<path class=\"cone\" data-radius=\"")
                    page.text(Format.decimal(r, places: 0))
                    page.raw("\" transform=\"rotate(")
                    page.text(Format.decimal(heading, places: 1))
                    page.raw(")\" d=\"M0 0L")
                    page.text(Format.decimal(-r * sin(a), places: 1))
                    page.raw(" ")
                    page.text(Format.decimal(-r * cos(a), places: 1))
                    page.raw("A")
                    page.text(Format.decimal(r, places: 1))
                    page.raw(" ")
                    page.text(Format.decimal(r, places: 1))
                    page.raw(" 0 0 1 ")
                    page.text(Format.decimal(r * sin(a), places: 1))
                    page.raw(" ")
                    page.text(Format.decimal(-r * cos(a), places: 1))
                    page.raw("Z\"/>")
                }
                page.raw("<circle r=\"")
                page.text(Format.decimal(look.currentRadius, places: 0))
                page.raw("\"/></g>")
            } else {
                page.raw(")\" href=\"")
                page.text(mark.url)
                page.raw("\" aria-label=\"Go to ")
                page.text(mark.label)
                page.raw("\"><title>")
                page.text(mark.label)
                page.raw("</title><circle r=\"")
                page.text(Format.decimal(look.dotRadius, places: 0))
                page.raw("\"/></a>")
            }
        }
        page.raw("</g>")
    }
}
