import NTFloorPlans
import NTAPIModel
import Testing
import TestSupport
@testable import NTTourViewer

/// Walking a tour (issue "The tour as a product"): its order, its titles, the ways on from each
/// panorama and where they stand in its image; and the panorama page that shows them.
@Suite struct TourWalkTests {
    /// The browser test's house (Tests/browser/tourfixture.py WALK_FLOORS): two floors, an
    /// L-shaped living room sharing a wall with the hall and the kitchen; the hall and the
    /// kitchen touch at no wall. Floor 1 comes first in the document: the walk orders by number.
    /// `headings`: in the uploads' positions (`upload`), in the files' XMP (`file`), or nowhere.
    enum Headings { case upload, file, none }

    static func house(headings: Headings = .upload) -> TourDocument {
        let plan: [[(String, String, [(Double, Double, Double)])]] = [
            [("Hall", "[[0,0],[3,0],[3,4],[0,4]]", [(1.5, 2, 90)]),
             ("Living room", "[[3,0],[9,0],[9,3],[6,3],[6,6],[3,6]]", [(4.5, 1.5, 90), (4.5, 4.5, 0)]),
             ("Kitchen", "[[6,3],[9,3],[9,6],[6,6]]", [(7.5, 4.5, 270)])],
            [("Landing", "[[0,0],[3,0],[3,4],[0,4]]", [(1.5, 2, 90)]),
             ("Bedroom", "[[3,0],[8,0],[8,4],[3,4]]", [(5.5, 2, 270)])],
        ]
        let property = PropertyDocument(id: "property", tourId: "tour", name: "Dune House", floorCount: 2, metadata: "{}",
                                        createdAt: "2026-12-01T05:00:00.000Z", updatedAt: "2026-12-01T05:30:00.000Z")
        var floors: [TourDocument.Floor] = []
        for (number, rooms) in plan.enumerated() {
            let floorId = "floor-\(number)"
            var panoramas: [PanoramaDocument] = []
            let documents = rooms.map { name, outline, spots in
                for (x, y, heading) in spots {
                    panoramas.append(PanoramaDocument(id: "\(name.filter { $0 != " " })-\(panoramas.count + 1)", propertyId: "property", floorId: floorId, roomId: name,
                                                      contentType: "image/jpeg", size: 1000, sha256: "ab", createdAt: "2026-12-01T05:22:44.123Z",
                                                      position: try! PanoramaPosition(x: x, y: y, heading: headings == .upload ? heading : nil),
                                                      fileGeometry: headings == .file ? PanoramaFileGeometry(heading: heading) : nil))
                }
                return RoomDocument(id: name, floorId: floorId, name: name, outline: outline, height: 2.5, capture: nil)
            }
            let floor = FloorDocument(id: floorId, propertyId: "property", number: number, name: nil, planRevision: 1, continuable: false, rooms: documents)
            floors.insert(TourDocument.Floor(floor: floor, plan: nil, worldMap: nil, panoramas: panoramas), at: 0)
        }
        return TourDocument(tourId: "tour", property: property, floors: floors)
    }

    @Test func theWalkGoesFloorByFloorRoomByRoomAndTitlesEachByItsPlace() {
        let walk = TourWalk(Self.house())
        #expect(walk.stops.map(\.title) == ["Hall", "Living room · 1 of 2", "Living room · 2 of 2", "Kitchen", "Landing", "Bedroom"])
        #expect(walk.stops.map(\.panorama.id) == ["Hall-1", "Livingroom-2", "Livingroom-3", "Kitchen-4", "Landing-1", "Bedroom-2"])
    }

    @Test func theWaysOnAreTheRoomsOthersAndTheRoomsThatShareAWall() throws {
        let walk = TourWalk(Self.house())
        let ways = { (id: String) in walk.links(from: walk.index(of: id)!).map { walk.stops[$0.target].panorama.id } }
        #expect(ways("Hall-1") == ["Livingroom-2", "Livingroom-3"]) // not the kitchen: no shared wall
        #expect(ways("Livingroom-2") == ["Hall-1", "Livingroom-3", "Kitchen-4"])
        #expect(ways("Kitchen-4") == ["Livingroom-2", "Livingroom-3"])
        #expect(ways("Landing-1") == ["Bedroom-2"]) // never across floors
        // How far each stands, whatever the headings: the living room's two 3.04 and 3.91 m away.
        let distances = TourWalk(Self.house(headings: .none)).links(from: 0).map { try! #require($0.distance) }
        #expect(abs(distances[0] - 3.041) < 0.01 && abs(distances[1] - 3.905) < 0.01)
        // Where each stands in the hall's image (heading 90: east at its centre).
        let fromHall = walk.links(from: 0).map { try! #require($0.longitude) }
        #expect(abs(fromHall[0] - (-9.462)) < 0.01 && abs(fromHall[1] - 39.806) < 0.01)
        // Without a heading a way is listed, not placed.
        let unplaced = TourWalk(Self.house(headings: .none))
        #expect(unplaced.links(from: 0).allSatisfy { $0.longitude == nil })
        // A heading read from the file (GPano:PoseHeadingDegrees) places them as the upload's does.
        let fromFiles = TourWalk(Self.house(headings: .file))
        #expect(fromFiles.links(from: 0).map(\.longitude) == walk.links(from: 0).map(\.longitude))
    }

    @Test func longitudesAreClockwiseFromTheImagesCentre() throws {
        let origin = try PanoramaPosition(x: 0, y: 0, heading: 0) // facing up the plan
        let at = { (x: Double, y: Double) in TourWalk.longitude(from: origin, heading: 0, to: try! PanoramaPosition(x: x, y: y)) }
        #expect(at(0, -1) == 0 && at(1, 0) == 90 && at(0, 1) == 180 && at(-1, 0) == -90)
        #expect(TourWalk.longitude(from: try PanoramaPosition(x: 0, y: 0), heading: 270, to: try PanoramaPosition(x: 1, y: 0)) == 180)
        #expect(at(0, 0) == nil) // the same spot: no direction
        #expect(TourWalk.longitude(from: origin, heading: 0, to: nil) == nil)
        #expect(TourWalk.longitude(from: origin, heading: nil, to: try PanoramaPosition(x: 1, y: 0)) == nil)
        #expect([0.0, 30, -45, 90, -120, 170].map(Direction.words) == ["ahead", "ahead, to the right", "ahead, to the left", "to the right",
                                                                     "behind, to the left", "behind"])
    }

    @Test func roomsShareAWallOnlyAlongAnEdgeLongEnough() {
        let square: [(x: Double, y: Double)] = [(0, 0), (3, 0), (3, 3), (0, 3)]
        #expect(RoomWalls.shareAWall(square, [(3, 1), (6, 1), (6, 2), (3, 2)])) // a metre of the east wall
        #expect(RoomWalls.shareAWall(square, [(3.1, 0), (6, 0), (6, 3), (3.1, 3)])) // a scan's 10 cm gap
        #expect(!RoomWalls.shareAWall(square, [(3, 3), (6, 3), (6, 6), (3, 6)])) // a corner only
        #expect(!RoomWalls.shareAWall(square, [(3, 2.8), (6, 2.8), (6, 6), (3, 6)])) // 20 cm of wall: a doorway's jamb, not a wall
        #expect(!RoomWalls.shareAWall(square, [(4, 0), (6, 0), (6, 3), (4, 3)])) // a metre apart
        #expect(!RoomWalls.shareAWall(square, []))
    }

    /// A plan at the API's limits (10 rooms of 10,000 points, in a row): each room's neighbours
    /// are found from outlines of at most `maxPointsCompared` points, straight runs merged, so a
    /// page's ways cost what a plain plan's do (finding 4 of "Hold at the fourth edge": every
    /// page compared 9 × 10⁸ pairs of edges), and a floor's are worked out once per plan.
    @Test func aPlanAtTheLimitsFindsItsNeighboursFromBoundedOutlines() {
        // Room n: 4 m wide, from x = 4n, its 10,000 points spread along its four walls.
        let rooms = PlanFixture.roomsInARow(10, points: 10_000).enumerated().map { n, outline in
            RoomDocument(id: "room-\(n)", floorId: "f", name: "Room \(n)", outline: PlanFixture.json(outline), height: 2.5, capture: nil)
        }
        let outline = PlanGeometry.points(rooms[0].outline) ?? []
        // Its four corners and the last point of its last wall (the way back to the first closes it).
        #expect(outline.count == 10_000 && RoomWalls.comparable(outline).count == 5, "\(RoomWalls.comparable(outline).prefix(8))")
        let found = RoomWalls.neighbours(rooms)
        for n in 0..<10 {
            let expected = Set([n - 1, n + 1].filter { (0..<10).contains($0) }.map { "room-\($0)" })
            #expect(found["room-\(n)", default: []] == expected, "room \(n): \(found["room-\(n)", default: []].sorted())")
        }
        // A jagged outline (no straight run to merge) is compared from at most the bound.
        let jagged = (0..<10_000).map { (x: Double($0) / 1000, y: $0 % 2 == 0 ? 0 : 0.3) }
        #expect(RoomWalls.comparable(jagged).count <= RoomWalls.maxPointsCompared)
        // Kept per plan: the floor's answer is the same value, asked again or by another page.
        let floor = FloorDocument(id: "f", propertyId: "p", number: 0, name: nil, planRevision: 3, continuable: false, rooms: rooms)
        #expect(RoomWalls.neighbours(of: floor) == found && RoomWalls.neighbours(of: floor) == found)
    }

    @Test func thePanoramaPageShowsTheWaysThePlanAndTheSteps() {
        let page = ViewerPagesTests.text(ViewerPages.panorama(ViewerPagesTests.frame, Self.house(), panoramaId: "Livingroom-2", widths: ViewerPagesTests.widths))
        #expect(page.contains("<title>Living room · 1 of 2 · NoughtyTours</title>") && page.contains("<h1>Living room · 1 of 2</h1>"))
        #expect(page.contains("<a rel=\"prev\" href=\"/app/panoramas/Hall-1\">← Hall</a>"))
        #expect(page.contains("<a rel=\"next\" href=\"/app/panoramas/Livingroom-3\">Living room · 2 of 2 →</a>"))
        #expect(page.contains("data-heading=\"90.0\""))
        #expect(page.contains("<a href=\"/app/panoramas/Kitchen-4\" data-longitude=\"45.0\" data-distance=\"4.24\">Kitchen</a><span class=\"direction\">ahead, to the right</span>"))
        // The minimap: a dot for each of the floor's panoramas, this one with its cone; the floors.
        #expect(page.components(separatedBy: "class=\"spot\"").count - 1 == 3)
        #expect(page.contains("class=\"spot current\"") && page.contains("class=\"cone\""))
        #expect(page.contains("<a href=\"/app/panoramas/Hall-1\" aria-current=\"page\">Ground floor</a>"))
        #expect(page.contains("<a href=\"/app/panoramas/Landing-1\">Floor 1</a>"))
        // The last panorama of a floor leads on to the next floor, and says so.
        let kitchen = ViewerPagesTests.text(ViewerPages.panorama(ViewerPagesTests.frame, Self.house(), panoramaId: "Kitchen-4", widths: ViewerPagesTests.widths))
        #expect(kitchen.contains("<a rel=\"next\" href=\"/app/panoramas/Landing-1\">Floor 1 · Landing →</a>"))
        let last = ViewerPagesTests.text(ViewerPages.panorama(ViewerPagesTests.frame, Self.house(), panoramaId: "Bedroom-2", widths: ViewerPagesTests.widths))
        #expect(!last.contains("rel=\"next\""))
        // An embed offers no download, so it does not say there is one.
        let shared = PageFrame(paths: .share(secret: "s3cret"), subtitle: nil, csrf: nil)
        let unreadable = ViewerPagesTests.text(ViewerPages.embed(shared, Self.house(), panoramaId: "Hall-1", widths: ViewerPagesTests.widths, readable: false))
        #expect(unreadable.contains("could not be read") && !unreadable.contains("downloaded") && unreadable.contains("href=\"/t/s3cret\""))
        #expect(unreadable.contains("<a rel=\"next\" href=\"/t/s3cret/embed/panoramas/Livingroom-2\">"))
        // The floor's own page marks every panorama it can place, none as the current one.
        let floor = ViewerPagesTests.text(ViewerPages.floor(ViewerPagesTests.frame, Self.house(), floorId: "floor-0", widths: ViewerPagesTests.widths))
        #expect(floor.components(separatedBy: "<a class=\"spot\"").count - 1 == 4 && !floor.contains("spot current"))
        #expect(floor.contains("href=\"/app/panoramas/Livingroom-3\" aria-label=\"Go to Living room · 2 of 2\""))
    }
}

/// A room's measurements on the pages, in the units the agency chose (or its visitor);
/// `SheetTests` holds how they are measured.
@Suite struct RoomMeasureTests {
    @Test func unitsFollowTheFloorNamingsCountryUntilChosen() {
        #expect(MeasureUnits.of(.us) == .imperial && MeasureUnits.of(.uk) == .metric && MeasureUnits.of(.numbers) == .metric)
        #expect(BrandingDocument(floorNames: .us).units == .imperial && BrandingDocument(floorNames: .us, units: .metric).units == .metric)
    }

    @Test func theFloorPageSaysEachRoomsSizeAndAreaAndTheFloorsTotal() {
        var frame = ViewerPagesTests.frame
        let floorId = TourWalkTests.house().floors.first { $0.floor.number == 0 }!.floor.id
        let metric = ViewerPagesTests.text(ViewerPages.floor(frame, TourWalkTests.house(), floorId: floorId, widths: ViewerPagesTests.widths))
        #expect(metric.contains("<span class=\"measure\">max 6.0 × 6.0 m · 27.0 m²</span>") && metric.contains("Floor area 48.0 m²"))
        #expect(metric.contains("<tspan class=\"area\"") && metric.contains(">27.0 m²</tspan>"))
        frame.units = .imperial
        let imperial = ViewerPagesTests.text(ViewerPages.floor(frame, TourWalkTests.house(), floorId: floorId, widths: ViewerPagesTests.widths))
        #expect(imperial.contains("291 ft²") && imperial.contains("Floor area 517 ft²") && !imperial.contains("m²"))
    }
}
