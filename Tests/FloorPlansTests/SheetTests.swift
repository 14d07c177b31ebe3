import Foundation
import NTAPIModel
import Testing
import TestSupport
@testable import NTFloorPlans

/// Published floor plans as pure layouts, and their SVG, PDF and PNG.
@Suite struct SheetTests {
    /// The browser test's house: two floors, an L-shaped living room.
    static func house(brand: FloorPlanSource.Brand? = nil, units: ShownUnits = ShownUnits(.metric, naming: .uk), north: Double? = nil) -> FloorPlanSource {
        let room = { (name: String, points: [PlanPoint]) in FloorPlanSource.Room(name: name, points: points) }
        return FloorPlanSource(title: "Dune House", floors: [
            FloorPlanSource.Floor(name: "Ground floor", rooms: [
                room("Hall", [(0, 0), (3, 0), (3, 4), (0, 4)]),
                room("Living room", [(3, 0), (9, 0), (9, 3), (6, 3), (6, 6), (3, 6)]),
                room("Kitchen", [(6, 3), (9, 3), (9, 6), (6, 6)]),
            ]),
            FloorPlanSource.Floor(name: "First floor", rooms: [
                room("Landing", [(0, 0), (3, 0), (3, 4), (0, 4)]),
                room("Bedroom", [(3, 0), (8, 0), (8, 4), (3, 4)]),
            ]),
        ], north: north, brand: brand, units: units, paper: .a4)
    }

    @Test func aRectangleIsMeasuredByItsSidesTurnedOrNotAndAnotherShapeByItsExtentSaidSo() {
        // The house's living room: 6 × 3 and 3 × 3 metres.
        let living = RoomMeasure([(3, 0), (9, 0), (9, 3), (6, 3), (6, 6), (3, 6)])
        #expect(living.area == 27 && living.width == 6 && living.depth == 6 && !living.isRectangle)
        #expect(living.size(in: .metric) == "max 6.0 × 6.0 m" && RoomMeasure.area(living.area, in: .metric) == "27.0 m²")
        #expect(living.size(in: .imperial) == "max 19′ 8″ × 19′ 8″" && RoomMeasure.area(living.area, in: .imperial) == "291 ft²")
        // Wound either way, the same area; points on a straight wall change nothing.
        let kitchen = RoomMeasure([(0, 0), (0, 4), (1.5, 4), (3, 4), (3, 0)])
        #expect(kitchen.area == 12 && kitchen.isRectangle && kitchen.size(in: .metric) == "3.0 × 4.0 m")
        // A 4 × 2.5 m room turned 30° on the plan: its sides, not its bounding box.
        let (c, s) = (cos(Double.pi / 6), sin(Double.pi / 6))
        let turned = RoomMeasure([(0, 0), (4 * c, 4 * s), (4 * c - 2.5 * s, 4 * s + 2.5 * c), (-2.5 * s, 2.5 * c)])
        #expect(turned.isRectangle && abs(turned.width - 4) < 1e-9 && abs(turned.depth - 2.5) < 1e-9 && abs(turned.area - 10) < 1e-9)
        // A UK agency's plan says both, the other in brackets.
        #expect(kitchen.size(ShownUnits(.metric, naming: .uk)) == "3.0 × 4.0 m (9′ 10″ × 13′ 1″)")
        #expect(living.size(ShownUnits(.metric, naming: .uk)) == "max 6.0 × 6.0 m (19′ 8″ × 19′ 8″)")
        #expect(RoomMeasure.area(12, ShownUnits(.imperial, naming: .us)) == "129 ft²")
    }

    /// North is drawn where the panoramas tell it, not otherwise; a US agency's sheets are
    /// Letter, a UK one's A4; the cover comes first for a home of several floors, with the
    /// home's area, and a single floor has none.
    @Test func northPaperAndCoverFollowWhatIsKnown() {
        let texts = { (sheet: Sheet) in sheet.flattened.compactMap { mark -> String? in
            if case .text(let text, _, _, _, _, _) = mark { return text }
            return nil
        } }
        #expect(texts(SheetLayout.floorSheet(Self.house(north: 30), floor: 1)).contains("N"))
        #expect(!texts(SheetLayout.floorSheet(Self.house(), floor: 1)).contains("N"))
        var us = Self.house(units: ShownUnits(.imperial, naming: .us))
        us.paper = Paper(.us)
        let letter = SheetLayout.floorSheet(us, floor: 1)
        #expect([letter.width, letter.height].sorted() == [612, 792])
        #expect(texts(letter).contains("Floor area: 344 ft²"), "a US agency's plan in feet alone: \(texts(letter))")
        let a4 = SheetLayout.floorSheet(Self.house(), floor: 0)
        #expect([a4.width, a4.height].sorted() == [595.28, 841.89])
        let sheets = SheetLayout.sheets(Self.house())
        #expect(sheets.count == 3 && texts(sheets[0]).contains("Total floor area") && texts(sheets[0]).contains("80.0 m² (861 ft²)"))
        var single = Self.house()
        single.floors.removeLast()
        #expect(SheetLayout.sheets(single).count == 1)
    }

    /// A floor at the API's limits (500 rooms of 200 points: 100,000) is drawn from its outlines
    /// thinned to `maxDrawnPoints`, its 500 rooms named; its PNG's memory is known before it is
    /// drawn, and bounded by the width.
    @Test func aPlanAtTheAPIsLimitsIsDrawnFromABoundedSimplification() throws {
        let rooms = (0..<500).map { index -> FloorPlanSource.Room in
            let (column, row) = (Double(index % 25), Double(index / 25))
            let points = (0..<200).map { step -> PlanPoint in
                let angle = Double(step) / 200 * 2 * .pi
                return (column * 4 + 2 + 1.8 * cos(angle), row * 4 + 2 + 1.8 * sin(angle))
            }
            return FloorPlanSource.Room(name: "Room \(index)", points: points)
        }
        let source = FloorPlanSource(title: "Warehouse", floors: [FloorPlanSource.Floor(name: "Ground floor", rooms: rooms)], north: nil, brand: nil,
                                     units: ShownUnits(primary: .metric), paper: .a4)
        let sheet = SheetLayout.floorSheet(source, floor: 0)
        let polygons = sheet.flattened.compactMap { mark -> Int? in
            if case .polygon(let points, _, _, _) = mark { return points.count }
            return nil
        }
        #expect(polygons.count == 500 && polygons.reduce(0, +) <= SheetLayout.maxDrawnPoints, "\(polygons.reduce(0, +)) points drawn")
        let named = sheet.flattened.filter { mark in
            if case .text(let text, _, _, true, _, _) = mark { return text.hasPrefix("Room ") }
            return false
        }
        #expect(named.count == 500)
        let memory = FloorPlanFile.floorPNG(index: 0, width: 4096).memoryBytes(source)
        #expect(memory > 4096 * 2800 * 4 && memory < 128 << 20, "\(memory >> 20) MiB for a 4096-wide PNG")
        for file in [FloorPlanFile.floorSVG(index: 0), .floorPDF(index: 0), .floorPNG(index: 0, width: 1024)] {
            #expect(try !file.make(from: source).isEmpty)
        }
    }

    /// Writes the house's sheets where `FLOOR_PLAN_SAMPLES` says, to be looked at.
    @Test func theHousesSheetsAreWritten() throws {
        guard let folder = ProcessInfo.processInfo.environment["FLOOR_PLAN_SAMPLES"] else { return }
        let logo = try Data(contentsOf: URL(fileURLWithPath: folder + "/logo.jpg"))
        let branded = Self.house(brand: FloorPlanSource.Brand(name: "Harbour Homes & Coastal Lettings", contact: ["023 9200 0000", "hello@harbour.example"], logo: [UInt8](logo)), north: 30)
        try Data(FloorPlanFile.homePDF.make(from: branded)).write(to: URL(fileURLWithPath: folder + "/home.pdf"))
        try Data(FloorPlanFile.floorSVG(index: 0).make(from: branded)).write(to: URL(fileURLWithPath: folder + "/floor0.svg"))
        try Data(FloorPlanFile.floorPNG(index: 0, width: 1200).make(from: branded)).write(to: URL(fileURLWithPath: folder + "/floor0.png"))
        try Data(FloorPlanFile.homePDF.make(from: Self.house())).write(to: URL(fileURLWithPath: folder + "/unbranded.pdf"))
    }
}

extension Sheet {
    /// Every mark, those of rooms too, in drawing order.
    var flattened: [SheetMark] {
        marks.flatMap { mark -> [SheetMark] in
            if case .room(_, let inner) = mark { return inner }
            return [mark]
        }
    }
}
