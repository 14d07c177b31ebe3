import Foundation
import NTAPIModel
import Testing
@testable import NTTourViewer

/// The dollhouse's model (issue "The tour a buyer walks"): every floor stacked on the one below,
/// each room's outline, height and area in the visitor's units, the panoramas as dots.
@Suite struct DollhouseTests {
    @Test func floorsStandOnTheTallestRoomBelowAndRoomsCarryTheirAreas() throws {
        var tour = TourWalkTests.house()
        // The ground floor's kitchen is taller; a room without a height stands 2.5 m.
        let ground = try #require(tour.floors.firstIndex { $0.floor.number == 0 })
        tour.floors[ground].floor.rooms[2].height = 3.2
        let upper = try #require(tour.floors.firstIndex { $0.floor.number == 1 })
        tour.floors[upper].floor.rooms[0].height = nil
        let walk = TourWalk(tour)
        let house = try #require(Dollhouse(walk, at: walk.index(of: "Kitchen-4")!, .share(secret: "s"), units: .metric, photoWidth: 1024, cameraHeight: 1.5))
        #expect(house.floors.map(\.name) == ["Ground floor", "Floor 1"])
        #expect(house.floors.map(\.base) == [0, 3.2] && house.floors.map(\.current) == [true, false])
        #expect(house.floors[0].rooms.map(\.area) == ["12.0 m²", "27.0 m²", "9.0 m²"] && house.floors[1].rooms.map(\.height) == [2.5, 2.5])
        #expect(house.floors[0].spots.map(\.label) == ["Hall", "Living room · 1 of 2", "Living room · 2 of 2", "Kitchen"])
        #expect(house.floors[0].spots.filter(\.current).map(\.camera.url) == ["/t/s/panoramas/Kitchen-4"])
        let feet = try #require(Dollhouse(walk, at: 0, .app, units: .imperial, photoWidth: 1024, cameraHeight: 1.5))
        #expect(feet.floors[1].rooms.map(\.area) == ["129 ft²", "215 ft²"])
        // The page's JSON reads back as the model.
        let json = try JSONReader.parse(house.json)
        let floors = try #require(json.members?.first { $0.key == "floors" }?.value.array)
        let rooms = try #require(floors[1].members?.first { $0.key == "rooms" }?.value.array)
        #expect(rooms.count == 2 && rooms[1].members?.first { $0.key == "name" }?.value.string == "Bedroom")
    }

    /// Each room is drawn with its panoramas whose place is known (issue "The dollhouse in
    /// photographs"): each one's preview, its camera's place, height and heading; a room without
    /// one has none.
    @Test func eachRoomIsDrawnWithItsPlacedPanoramas() throws {
        var tour = TourWalkTests.house()
        let ground = try #require(tour.floors.firstIndex { $0.floor.number == 0 })
        // The living room's second panorama says its camera's height; the hall's takes the
        // server's default.
        let second = try #require(tour.floors[ground].panoramas.firstIndex { $0.id == "Livingroom-3" })
        tour.floors[ground].panoramas[second].position = try PanoramaPosition(x: 4.5, y: 4.5, heading: 0, height: 1.2)
        // The kitchen has none with a place.
        let kitchen = try #require(tour.floors[ground].panoramas.firstIndex { $0.id == "Kitchen-4" })
        tour.floors[ground].panoramas[kitchen].position = nil
        let walk = TourWalk(tour)
        let house = try #require(Dollhouse(walk, at: 0, .share(secret: "s"), units: .metric, photoWidth: 1024, cameraHeight: 1.6))
        let photos = house.floors[0].rooms.map { $0.photos.map { "\($0.url) \($0.x),\($0.y) \($0.height) \($0.heading ?? -1)" } }
        #expect(photos == [["/t/s/panoramas/Hall-1/preview?width=1024 1.5,2.0 1.6 90.0"],
                           ["/t/s/panoramas/Livingroom-2/preview?width=1024 4.5,1.5 1.6 90.0", "/t/s/panoramas/Livingroom-3/preview?width=1024 4.5,4.5 1.2 0.0"],
                           []], "\(photos)")
        #expect(house.json.contains("\"height\":1.2") && house.json.contains("\"photos\":[]"))
    }

    /// An outline of many points is drawn from some of them; its area is still the whole outline's.
    @Test func aLongOutlineIsThinnedAndItsAreaKept() throws {
        var tour = TourWalkTests.house()
        let ground = try #require(tour.floors.firstIndex { $0.floor.number == 0 })
        // A 10 m circle of 10,000 points.
        let points = (0..<10_000).map { index -> String in
            let angle = Double(index) / 10_000 * 2 * .pi
            return "[\(10 * cos(angle)),\(10 * sin(angle))]"
        }
        tour.floors[ground].floor.rooms[0].outline = "[" + points.joined(separator: ",") + "]"
        let house = try #require(Dollhouse(TourWalk(tour), at: 0, .app, units: .metric, photoWidth: 1024, cameraHeight: 1.5))
        #expect(house.floors[0].rooms[0].points.count == 250 && house.floors[0].rooms[0].area == "314.2 m²")
    }

    @Test func aTourWithoutOutlinesHasNoDollhouse() {
        var tour = TourWalkTests.house()
        for index in tour.floors.indices { tour.floors[index].floor.rooms = [] }
        #expect(Dollhouse(TourWalk(tour), at: 0, .app, units: .metric, photoWidth: 1024, cameraHeight: 1.5) == nil)
    }
}
