#if canImport(Glibc)
import Glibc
#endif
import NTAPIModel
import NTImagePreviews

/// How a published floor plan is laid out on its pages: for each floor a sheet (the property
/// and the floor named at the top, the rooms drawn as walls around their floors, each named
/// with its size and area, the floor's area, a scale bar and north below), and for a home of
/// several floors a cover before them (each floor's area, the home's total, the floors small).
/// A branded plan carries the agency's logo, name and contact; an unbranded one nothing of
/// them, nor of the platform. Pure: what it gives is drawn by `SVGSheetWriter` and
/// `CairoSheetWriter` alike.
public enum SheetLayout {
    static let margin = 36.0
    /// A wall's thickness on the plan, in metres (interior walls are about 0.1, outer ones more).
    static let wallMetres = 0.12
    /// The most outline points drawn on one sheet, and rooms labelled: a plan at the API's
    /// limits (100,000 points, 500 rooms to a plan, several plans to a floor) is drawn from
    /// its outlines evenly thinned, and its largest rooms named.
    static let maxDrawnPoints = 20_000
    static let maxLabelledRooms = 500
    static let disclaimer = "For illustration only. Measurements are approximate."

    /// Every page: a cover when the home has several floors, then one sheet per floor.
    public static func sheets(_ source: FloorPlanSource) -> [Sheet] {
        let floors = source.floors.indices.map { floorSheet(source, floor: $0) }
        return source.floors.count > 1 ? [coverSheet(source)] + floors : floors
    }

    /// The sheet of floor `index`.
    public static func floorSheet(_ source: FloorPlanSource, floor index: Int) -> Sheet {
        let floor = source.floors[index]
        let rooms = drawnRooms(floor)
        let bounds = PlanBox(around: rooms.flatMap(\.points))
        let (width, height) = page(source.paper, for: bounds)
        var marks: [SheetMark] = []
        let headerBottom = header(source, subtitle: floor.name, width: width, into: &marks)
        let footerTop = height - margin - footerHeight(source)
        let box = PlanBox(left: margin, top: headerBottom + 12, right: width - margin, bottom: footerTop - 12)
        let placed = Placement(bounds: bounds, into: box)
        drawRooms(rooms, placed, labelledIn: source.units, into: &marks)

        var y = footerTop + 8
        marks.append(.text("Floor area: " + RoomMeasure.area(floor.area, source.units), at: (margin, y), size: 11, bold: true, anchor: .start, colour: .ink))
        y += 20
        scaleBar(placed.scale, source.units.primary, at: (margin, y), into: &marks)
        if let north = source.north { northArrow(north, at: (width - margin - 16, footerTop + 20), into: &marks) }
        footer(source, width: width, height: height, into: &marks)
        return Sheet(width: width, height: height, marks: marks)
    }

    /// The size of floor `index`'s sheet: the paper, turned to landscape for a plan wider than tall.
    public static func floorPage(_ source: FloorPlanSource, floor index: Int) -> (width: Double, height: Double) {
        page(source.paper, for: PlanBox(around: source.floors[index].rooms.flatMap(\.points)))
    }

    static func page(_ paper: Paper, for bounds: PlanBox) -> (width: Double, height: Double) {
        let size = paper.size
        return bounds.width > bounds.height * 1.15 ? (size.height, size.width) : size
    }

    /// The cover of a home of several floors: each floor's area and the total, and each floor
    /// drawn small, side by side.
    public static func coverSheet(_ source: FloorPlanSource) -> Sheet {
        let (width, height) = source.paper.size
        var marks: [SheetMark] = []
        var y = header(source, subtitle: "Floor plans", width: width, into: &marks) + 24
        for floor in source.floors {
            marks.append(.text(floor.name, at: (margin, y), size: 12, bold: false, anchor: .start, colour: .ink))
            marks.append(.text(RoomMeasure.area(floor.area, source.units), at: (width - margin, y), size: 12, bold: false, anchor: .end, colour: .ink))
            y += 12
            marks.append(.line([(margin, y), (width - margin, y)], stroke: .grey, lineWidth: 0.5))
            y += 14
        }
        marks.append(.text("Total floor area", at: (margin, y), size: 12, bold: true, anchor: .start, colour: .ink))
        marks.append(.text(RoomMeasure.area(source.area, source.units), at: (width - margin, y), size: 12, bold: true, anchor: .end, colour: .ink))
        y += 28

        // The floors small, at one scale, in the columns (one to three) that draw them largest.
        let footerTop = height - margin - footerHeight(source)
        let drawn = source.floors.map(drawnRooms)
        let grids = (1...min(3, source.floors.count)).map { columns -> (columns: Int, cellWidth: Double, cellHeight: Double, scale: Double) in
            let rows = (source.floors.count + columns - 1) / columns
            let cellWidth = (width - 2 * margin) / Double(columns)
            let cellHeight = max(40, (footerTop - 12 - y) / Double(rows))
            let scale = drawn.map { rooms -> Double in
                let bounds = PlanBox(around: rooms.flatMap(\.points))
                return Placement(bounds: bounds, into: PlanBox(left: 0, top: 0, right: cellWidth - 16, bottom: cellHeight - 32)).scale
            }.min() ?? 1
            return (columns, cellWidth, cellHeight, scale)
        }
        let (columns, cellWidth, cellHeight, scale) = grids.max { $0.scale < $1.scale } ?? (1, width - 2 * margin, 40, 1)
        for (index, rooms) in drawn.enumerated() {
            let (column, row) = (index % columns, index / columns)
            let bounds = PlanBox(around: rooms.flatMap(\.points))
            // At the top of its cell, its name under it.
            let left = margin + Double(column) * cellWidth + 8, top = y + Double(row) * cellHeight
            let cell = PlanBox(left: left, top: top, right: left + cellWidth - 16, bottom: top + max(bounds.height, 0.01) * scale)
            drawRooms(rooms, Placement(bounds: bounds, into: cell, scale: scale), labelledIn: nil, into: &marks)
            marks.append(.text(source.floors[index].name, at: ((cell.left + cell.right) / 2, cell.bottom + 14), size: 10, bold: true, anchor: .middle, colour: .ink))
        }
        footer(source, width: width, height: height, into: &marks)
        return Sheet(width: width, height: height, marks: marks)
    }

    /// A floor's rooms as drawn: each outline thinned so that the sheet holds at most
    /// `maxDrawnPoints`.
    static func drawnRooms(_ floor: FloorPlanSource.Floor) -> [FloorPlanSource.Room] {
        let total = floor.rooms.reduce(0) { $0 + $1.points.count }
        guard total > maxDrawnPoints else { return floor.rooms }
        let each = max(8, maxDrawnPoints / max(floor.rooms.count, 1))
        return floor.rooms.map { FloorPlanSource.Room(name: $0.name, points: PlanGeometry.bounded($0.points, to: each)) }
    }

    /// Plan metres to page points: the plan's bounds fitted (or at `scale`) and centred in a box.
    struct Placement {
        let scale: Double
        let origin: PlanPoint
        let offset: PlanPoint

        init(bounds: PlanBox, into box: PlanBox, scale given: Double? = nil) {
            let span = (x: max(bounds.width, 0.01), y: max(bounds.height, 0.01))
            scale = given ?? min(box.width / span.x, box.height / span.y)
            origin = (bounds.left, bounds.top)
            offset = (box.left + (box.width - span.x * scale) / 2, box.top + (box.height - span.y * scale) / 2)
        }

        func page(_ point: PlanPoint) -> PlanPoint {
            ((point.x - origin.x) * scale + offset.x, (point.y - origin.y) * scale + offset.y)
        }
    }

    /// Each room as its floor inside walls, and (with `units`) its name, size and area inside
    /// it, clear of the labels placed before it: the largest rooms first, `maxLabelledRooms` at most.
    static func drawRooms(_ rooms: [FloorPlanSource.Room], _ placed: Placement, labelledIn units: ShownUnits?, into marks: inout [SheetMark]) {
        let wall = min(max(wallMetres * placed.scale, units == nil ? 0.5 : 1), 5)
        let measures = rooms.map { RoomMeasure($0.points) }
        var labels: [Int: [SheetMark]] = [:]
        if let units {
            var taken: [PlanBox] = []
            let order = rooms.indices.sorted { measures[$0].area > measures[$1].area }.prefix(maxLabelledRooms)
            for index in order {
                let corners = rooms[index].points.map(placed.page)
                let bounds = PlanBox(around: corners)
                let lines = [rooms[index].name, measures[index].size(units), RoomMeasure.area(measures[index].area, units)]
                let longest = Double(lines.map(\.count).max() ?? 1)
                // As large as reads well, smaller where the room is narrow, never unreadable.
                let size = min(max(min(9, bounds.width * 0.9 / (longest * 0.62)), 5), 9)
                let centre = placed.page(PlanGeometry.centroid(rooms[index].points))
                let first = PlanGeometry.labelPlace(centre: (centre.x, centre.y - 1.2 * size), lines: lines, fontSize: size, dotRadius: 0, within: bounds,
                                                    outline: corners, dots: [], taken: taken)
                taken.append(PlanGeometry.labelBox(at: first, lines: lines, fontSize: size))
                labels[index] = lines.enumerated().map { line, text in
                    .text(text, at: (first.x, first.y + Double(line) * 1.2 * size), size: size, bold: line == 0, anchor: .middle, colour: line == 0 ? .ink : .grey)
                }
            }
        }
        for (index, room) in rooms.enumerated() {
            let outline = SheetMark.polygon(room.points.map(placed.page), fill: .floor, stroke: .ink, lineWidth: wall)
            marks.append(.room(room.name, [outline] + (labels[index] ?? [])))
        }
    }

    /// The property's name and `subtitle` at the top left; on a branded sheet the agency's
    /// logo and name at the top right. Returns where the header ends.
    static func header(_ source: FloorPlanSource, subtitle: String, width: Double, into marks: inout [SheetMark]) -> Double {
        var right = width - margin
        if let brand = source.brand, !brand.isEmpty {
            var nameY = margin + 8
            if let logo = brand.logo, let size = JPEGPreview.dimensions(of: logo), size.width > 0, size.height > 0 {
                let scale = min(150 / Double(size.width), 40 / Double(size.height))
                let (w, h) = (Double(size.width) * scale, Double(size.height) * scale)
                marks.append(.image(jpeg: logo, box: PlanBox(left: width - margin - w, top: margin - 6, right: width - margin, bottom: margin - 6 + h)))
                nameY = margin - 6 + h + 10
                right -= w + 12
            }
            if let name = brand.name {
                marks.append(.text(fitted(name, width: 200, size: 9), at: (width - margin, nameY), size: 9, bold: true, anchor: .end, colour: .ink))
                if brand.logo == nil { right -= 212 }
            }
        }
        marks.append(.text(fitted(source.title, width: right - margin, size: 16), at: (margin, margin + 4), size: 16, bold: true, anchor: .start, colour: .ink))
        marks.append(.text(fitted(subtitle, width: right - margin, size: 12), at: (margin, margin + 24), size: 12, bold: false, anchor: .start, colour: .grey))
        return margin + 44
    }

    /// How tall the footer is: the floor's area and the scale; a branded sheet's contact lines.
    static func footerHeight(_ source: FloorPlanSource) -> Double {
        44 + 11 * Double(contactLines(source).count) + 12
    }

    static func contactLines(_ source: FloorPlanSource) -> [String] {
        guard let brand = source.brand else { return [] }
        return Array(brand.contact.prefix(4))
    }

    /// The agency's contact (a branded sheet) and the disclaimer, at the bottom.
    static func footer(_ source: FloorPlanSource, width: Double, height: Double, into marks: inout [SheetMark]) {
        var y = height - margin - 11 * Double(contactLines(source).count)
        for line in contactLines(source) {
            marks.append(.text(fitted(line, width: width - 2 * margin, size: 8), at: (width - margin, y), size: 8, bold: false, anchor: .end, colour: .ink))
            y += 11
        }
        marks.append(.text(disclaimer, at: (margin, height - margin + 4), size: 7, bold: false, anchor: .start, colour: .grey))
    }

    /// A scale bar of a round length near 100 points, its length said in `units`.
    static func scaleBar(_ scale: Double, _ units: MeasureUnits, at point: PlanPoint, into marks: inout [SheetMark]) {
        let bar = ScaleBar(near: 100 / scale, units: units)
        let length = bar.metres * scale
        marks.append(.line([(point.x, point.y - 4), (point.x, point.y), (point.x + length, point.y), (point.x + length, point.y - 4)], stroke: .ink, lineWidth: 1))
        marks.append(.text(bar.label, at: (point.x + length + 6, point.y - 2), size: 8, bold: false, anchor: .start, colour: .ink))
    }

    /// North: an arrow turned `degrees` clockwise from up, with an N beyond its tip.
    static func northArrow(_ degrees: Double, at centre: PlanPoint, into marks: inout [SheetMark]) {
        let angle = degrees * .pi / 180
        func turned(_ x: Double, _ y: Double) -> PlanPoint {
            (centre.x + x * cos(angle) - y * sin(angle), centre.y + x * sin(angle) + y * cos(angle))
        }
        marks.append(.polygon([turned(0, -12), turned(5, 8), turned(0, 4), turned(-5, 8)], fill: .ink, stroke: nil, lineWidth: 0))
        marks.append(.text("N", at: turned(0, -19), size: 8, bold: true, anchor: .middle, colour: .ink))
    }

    /// `text` cut with an ellipsis to about `width` points at `size`.
    static func fitted(_ text: String, width: Double, size: Double) -> String {
        let most = max(4, Int(width / (0.58 * size)))
        return text.count <= most ? text : String(text.prefix(most - 1)) + "…"
    }
}

/// A scale bar's length: the round length nearest the one wanted, in metres or feet.
public struct ScaleBar: Equatable, Sendable {
    public let metres: Double
    public let label: String

    public init(near wanted: Double, units: MeasureUnits) {
        switch units {
        case .metric:
            let metres = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].min { abs($0 - wanted) < abs($1 - wanted) } ?? 1
            (self.metres, label) = (metres, metres < 1 ? "50 cm" : "\(Int(metres)) m")
        case .imperial:
            let feet = [1.0, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000].min { abs($0 * 0.3048 - wanted) < abs($1 * 0.3048 - wanted) } ?? 1
            (metres, label) = (feet * 0.3048, "\(Int(feet)) ft")
        }
    }
}
