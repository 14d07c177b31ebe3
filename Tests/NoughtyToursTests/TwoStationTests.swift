import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// docs/client.md "Second version": the whole capture travels, and another station continues a
/// floor. Two storage directories (two stations) and one toursd.
@Suite(.hangGuard, .testThreads) struct TwoStationTests {
    /// Capture output with values a careless re-encoding would change: nesting, unicode,
    /// an integer beside a fraction, an empty array, a null.
    static let capture = Data(#"{"walls":[{"id":1,"length":3.25,"tags":["load-bearing","ü"]}],"openings":[],"note":null,"confidence":0.875}"#.utf8)
    static let structure = Data(#"{"version":2,"floors":[{"levels":[0,2.6]}],"source":"lidar"}"#.utf8)

    private func jsonValue(_ data: Data) throws -> NSObject {
        try #require(try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? NSObject)
    }

    private func jsonValue(_ value: Any?) throws -> NSObject {
        try #require(value as? NSObject)
    }

    @Test func anotherStationDownloadsAFloorAndContinuesIt() async throws {
        let server = try LiveServer()
        defer { server.stop() }

        // Station A: a floor with a plan (capture output and structure) and a world map, synced.
        let stationA = try await makeSyncingLibrary(server: server.url, token: server.token)
        let property = try await stationA.properties.createProperty(name: "Harbour View", floorCount: 2, metadata: ["ref": "A-17"])
        let floor = try #require(try await stationA.properties.floors(of: property).first)
        let map = testDirectory("map").appendingPathExtension("bin")
        try Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: map)
        let roomsA = try await stationA.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
            CapturedRoom(name: "Kitchen", outline: [[0, 0], [4, 0], [4, 3]], height: 2.5, capture: Self.capture),
            CapturedRoom(name: "Hall", outline: [[4, 0], [6, 0], [6, 3]]),
        ], structure: Self.structure, worldMap: map)
        let panoramaA = try await capturePanorama(try await stationA.panoramaCapture.session(room: roomsA[0]))
        try await drain(stationA)
        let syncedA = try await stationA.properties.status(of: property)
        #expect(syncedA.isComplete)

        // Station B: lists the tenant's properties, downloads this one.
        let stationB = try await makeSyncingLibrary(server: server.url, token: server.token)
        let listed = try await stationB.properties.remoteProperties()
        let remote = try #require(listed.first { $0.id == property.id })
        #expect(remote.name == "Harbour View" && remote.floorCount == 2 && remote.tourId == syncedA.tourId)
        let downloaded = try await stationB.properties.download(propertyId: property.id)
        #expect(downloaded == property)
        let statusB = try await stationB.properties.status(of: downloaded)
        #expect(statusB.tourId == syncedA.tourId)
        #expect(statusB.sync == .synced && statusB.isComplete)
        #expect((statusB.floorCount, statusB.roomCount, statusB.panoramaCount, statusB.panoramasUploaded) == (2, 2, 1, 1))
        #expect(try await stationB.properties.floors(of: downloaded) == (try await stationA.properties.floors(of: property)))
        let floorB = try #require(try await stationB.properties.floors(of: downloaded).first)
        #expect(try await stationB.properties.rooms(of: floorB) == roomsA)
        #expect(try await stationB.structureCapture.continuableFloors(of: downloaded) == [floorB])
        // The world map came whole.
        let mapPath = try #require(try await stationB.store.read { db in try db.first("SELECT world_map_path FROM floors WHERE id = ?", floorB.id)?.decodeIfPresent(0, as: String.self) })
        #expect(FileManager.default.contents(atPath: mapPath) == (try Data(contentsOf: map)))

        // B continues the floor with a new room and a panorama in it, and syncs.
        let roomsB = try await stationB.structureCapture.apply(floor: floorB, mode: .continueScan, rooms: [
            CapturedRoom(name: "Study", outline: [[0, 3], [4, 3], [4, 6]], height: 2.4),
        ])
        #expect(roomsB.count == 3 && Array(roomsB.prefix(2)) == roomsA)
        let study = try #require(roomsB.last)
        let panoramaB = try await capturePanorama(try await stationB.panoramaCapture.session(room: study), seed: 9)
        try await drain(stationB)
        #expect(try await stationB.properties.uploadFailures(of: downloaded).isEmpty)
        #expect(try await stationB.properties.status(of: downloaded).isComplete)

        // The server's floor: A's rooms with their ids, names and panoramas, B's new room, and
        // A's capture output and structure as the same JSON values.
        let tour = try server.json("/v1/tours/\(try #require(syncedA.tourId).uuidString.lowercased())")
        let floors = try #require(tour["floors"] as? [[String: Any]])
        let serverFloor = try #require(floors.first { $0["id"] as? String == floor.id })
        let rooms = try #require(serverFloor["rooms"] as? [[String: Any]])
        #expect(rooms.map { $0["id"] as? String } == roomsB.map(\.id))
        #expect(rooms.map { $0["name"] as? String } == ["Kitchen", "Hall", "Study"])
        #expect(try jsonValue(rooms[0]["capture"]) == (try jsonValue(Self.capture)))
        #expect(rooms[1]["capture"] is NSNull)
        #expect(try jsonValue((serverFloor["plan"] as? [String: Any])?["structure"]) == (try jsonValue(Self.structure)))
        let panoramas = try #require(serverFloor["panoramas"] as? [[String: Any]])
        #expect(Set(panoramas.map { "\($0["id"] ?? "")@\($0["roomId"] ?? "")" }) == ["\(panoramaA)@\(roomsA[0].id)", "\(panoramaB)@\(study.id)"])
        #expect(serverFloor["continuable"] as? Bool == true)

        // A downloads again: B's room and panorama arrive; A's own work is untouched.
        try await stationA.properties.download(propertyId: property.id)
        #expect(try await stationA.properties.rooms(of: floor).map(\.id) == roomsB.map(\.id))
        let statusA = try await stationA.properties.status(of: property)
        #expect((statusA.roomCount, statusA.panoramaCount, statusA.panoramasUploaded, statusA.sync) == (3, 2, 2, .synced))
        let capturedHere = try await stationA.store.read { db in try db.first("SELECT path FROM panoramas WHERE id = ?", panoramaA)?.decodeIfPresent(0, as: String.self) }
        #expect(capturedHere?.isEmpty == false)
    }

    /// docs/client.md "Positions": where a panorama was taken goes up with it, one-shot or
    /// resumable, and comes down to another station; a position that does not read is refused
    /// before anything is captured.
    @Test func aPanoramasPositionTravelsWithIt() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let stationA = try await makeSyncingLibrary(server: server.url, token: server.token, options: fastSync(resumableThreshold: 64 << 10))
        let property = try await stationA.properties.createProperty(name: "Dune House", floorCount: 1, metadata: [:])
        let floor = try #require(try await stationA.properties.floors(of: property).first)
        let rooms = try await stationA.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
            CapturedRoom(name: "Living room", outline: [[0, 0], [6, 0], [6, 4], [0, 4]]),
        ])
        let session = try await stationA.panoramaCapture.session(room: rooms[0])
        let small = try await capturePanorama(session, position: try PanoramaPosition.onPlan(x: 1.5, y: 2, heading: -45))
        let large = try await capturePanorama(session, bytes: 200_000, seed: 3, position: try PanoramaPosition.onPlan(x: 4.25, y: 1))
        let unplaced = try await capturePanorama(session, seed: 11)
        for (x, y, heading) in [(Double.nan, 1.0, nil), (1, 10_001, nil), (1, 1, 400.0)] as [(Double, Double, Double?)] {
            #expect { _ = try PanoramaPosition.onPlan(x: x, y: y, heading: heading) } throws: { error in
                if case .invalidInput = error as? NoughtyToursError { return true }
                return false
            }
        }
        try await drain(stationA)
        #expect(try await stationA.properties.status(of: property).isComplete)

        let expected: [String: [String: Double]] = [small: ["x": 1.5, "y": 2, "heading": 315], large: ["x": 4.25, "y": 1]]
        for id in [small, large, unplaced] {
            let stored = try server.json("/v1/panoramas/\(id)")
            let position = (stored["position"] as? [String: Any])?.compactMapValues { ($0 as? NSNumber)?.doubleValue }
            #expect(position == expected[id], "\(id)")
        }

        let stationB = try await makeSyncingLibrary(server: server.url, token: server.token)
        try await stationB.properties.download(propertyId: property.id)
        let rows = try await stationB.store.read { db in
            try db.query("SELECT id, x, y, heading FROM panoramas").map { (try $0.decode(0, as: String.self), [try $0.decodeIfPresent(1, as: Double.self), try $0.decodeIfPresent(2, as: Double.self), try $0.decodeIfPresent(3, as: Double.self)]) }
        }
        let downloaded = Dictionary(uniqueKeysWithValues: rows)
        #expect(downloaded[small] == [1.5, 2, 315] && downloaded[large] == [4.25, 1, nil] && downloaded[unplaced] == [nil, nil, nil])
    }

    /// Local work still queued is never overwritten by a download.
    @Test func aDownloadKeepsLocalWorkStillQueued() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let stationA = try await makeSyncingLibrary(server: server.url, token: server.token)
        let property = try await stationA.properties.createProperty(name: "Queued", floorCount: 1)
        let floor = try #require(try await stationA.properties.floors(of: property).first)
        try await stationA.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "Old", outline: [[0, 0], [1, 0], [1, 1]])])
        try await drain(stationA)

        // A new plan here, not yet uploaded; the server still has the old one.
        let replanned = try await stationA.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
            CapturedRoom(name: "New", outline: [[0, 0], [2, 0], [2, 2]], capture: Data("[1,2]".utf8)),
        ])
        try await stationA.properties.download(propertyId: property.id)
        #expect(try await stationA.properties.rooms(of: floor) == replanned)
        // Uploaded, it wins on the server too.
        try await drain(stationA)
        let serverFloor = try server.json("/v1/floors/\(floor.id)")
        #expect((serverFloor["rooms"] as? [[String: Any]])?.map { $0["name"] as? String } == ["New"])
    }

    @Test func downloadingWhatTheServerLacksIsNotFound() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let station = try await makeSyncingLibrary(server: server.url, token: server.token)
        await #expect(throws: NoughtyToursError.notFound) { try await station.properties.download(propertyId: UUID().uuidString) }
        await #expect(throws: NoughtyToursError.invalidInput("a property id is a UUID, not nope")) {
            try await station.properties.download(propertyId: "nope")
        }
        #expect(try await station.properties.remoteProperties().isEmpty)
    }

    @Test func captureOutputThatIsNotJSONChangesNothing() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Bad output", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let room = CapturedRoom(name: "K", outline: [[0, 0], [1, 0], [1, 1]], capture: Data("{not json".utf8))
        await #expect(throws: NoughtyToursError.invalidInput("a room's capture is not a JSON value (at byte 1, an object key must be a string)")) {
            try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [room])
        }
        await #expect(throws: NoughtyToursError.invalidInput("the structure is not a JSON value (at byte 0, unexpected character)")) {
            try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [], structure: Data([0xff, 0xfe]))
        }
        #expect(try await tours.properties.rooms(of: floor).isEmpty)
        #expect(try await queueItems(tours, kind: .plan).isEmpty)
    }

    /// A plan as large as the server takes (10 rooms of 10,000 points): its upload succeeds
    /// although the answer, the floor with every outline, is larger than the library keeps
    /// of an answer in memory (it is not read). One point more is refused before it is queued.
    @Test func aPlanAsLargeAsTheServerTakesUploads() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let tours = try await makeSyncingLibrary(server: server.url, token: server.token)
        let property = try await tours.properties.createProperty(name: "Large plan", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let outline = (0..<10_000).map { index -> [Double] in
            let angle = Double(index) / 10_000 * 2 * Double.pi
            return [1234.5 + 3.25 * cos(angle), 678.25 + 3.25 * sin(angle)]
        }
        let rooms = (0..<10).map { CapturedRoom(name: "Room \($0)", outline: outline) }
        await #expect(throws: NoughtyToursError.invalidInput("a plan has at most 100000 outline points in all its rooms")) {
            try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: rooms + [CapturedRoom(name: "One more", outline: [[0, 0], [1, 0], [1, 1]])])
        }
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: rooms)
        try await drain(tours)
        #expect(try await tours.properties.uploadFailures(of: property).isEmpty)
        let serverRooms = try #require(try server.json("/v1/floors/\(floor.id)")["rooms"] as? [[String: Any]])
        #expect(serverRooms.count == 10)
        #expect((serverRooms.first?["outline"] as? [[Double]])?.count == 10_000)
    }

    /// Pages of 200 properties with their metadata pass a few MB: every page arrives whole.
    @Test func remotePropertiesReadsLargePagesWhole() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        let metadata = Dictionary(uniqueKeysWithValues: (0..<4).map { ("k\($0)", String(repeating: "m", count: 4000)) })
        let body = Array(try JSONSerialization.data(withJSONObject: ["name": "Big", "floorCount": 1, "metadata": metadata]))
        var made: Set<String> = []
        for _ in 0..<230 {
            let id = UUID().uuidString.lowercased()
            #expect(try client.request("PUT", "/v1/properties/\(id)", headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "application/json"],
                                       body: body).status == 201)
            made.insert(id)
        }
        let station = try await makeSyncingLibrary(server: server.url, token: server.token)
        let listed = try await station.properties.remoteProperties()
        #expect(Set(listed.map(\.id)) == made)
    }

    /// docs/client.md: "Downloading again refreshes what the server changed". Changed on the server
    /// behind this station: a newScan that removes a room (its panorama goes to the floor), a
    /// new world map, a panorama deleted. Downloaded again, the station has each change, and
    /// the replaced map's file is gone.
    @Test func downloadingAgainRefreshesWhatTheServerChanged() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let station = try await makeSyncingLibrary(server: server.url, token: server.token)
        let property = try await station.properties.createProperty(name: "Refreshed", floorCount: 1)
        let floor = try #require(try await station.properties.floors(of: property).first)
        let map = testDirectory("map").appendingPathExtension("bin")
        try Data(repeating: 1, count: 4096).write(to: map)
        let rooms = try await station.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
            CapturedRoom(name: "Kept", outline: [[0, 0], [1, 0], [1, 1]]), CapturedRoom(name: "Removed", outline: [[0, 0], [2, 0], [2, 2]]),
        ], worldMap: map)
        let inRemoved = try await capturePanorama(try await station.panoramaCapture.session(room: rooms[1]), seed: 3)
        let deleted = try await capturePanorama(try await station.panoramaCapture.session(room: rooms[0]), seed: 4)
        try await drain(station)
        let oldMap = try #require(try await station.store.read { db in try db.first("SELECT world_map_path FROM floors WHERE id = ?", floor.id)?.decodeIfPresent(0, as: String.self) })

        // Another station's work, straight through the API.
        let api = try RawClient(port: server.port)
        let auth = ["Authorization": "Bearer \(server.token)", "Content-Type": "application/json"]
        let plan = #"{"planId": "\#(UUID().uuidString.lowercased())", "mode": "newScan", "rooms": [{"id": "\#(rooms[0].id)", "name": "Kept", "outline": [[0,0],[1,0],[1,1]]}]}"#
        #expect(try api.request("PUT", "/v1/floors/\(floor.id)/plan", headers: auth, body: Array(plan.utf8)).status == 200)
        let newMap = [UInt8](repeating: 2, count: 5000)
        #expect(try api.request("PUT", "/v1/floors/\(floor.id)/worldmap", headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "application/octet-stream"],
                                body: newMap).status == 201) // the newScan cleared the old one
        #expect(try api.request("DELETE", "/v1/panoramas/\(deleted)", headers: auth).status == 204)

        try await station.properties.download(propertyId: property.id)
        #expect(try await station.properties.rooms(of: floor).map(\.id) == [rooms[0].id])
        let moved = try await station.store.read { db in try db.first("SELECT room_id FROM panoramas WHERE id = ?", inRemoved) }
        #expect(try moved != nil && moved?.decodeIfPresent(0, as: String.self) == nil) // on the floor now, as on the server
        #expect(try await station.store.read { db in try db.first("SELECT 1 FROM panoramas WHERE id = ?", deleted) } == nil)
        let mapPath = try #require(try await station.store.read { db in try db.first("SELECT world_map_path FROM floors WHERE id = ?", floor.id)?.decodeIfPresent(0, as: String.self) })
        #expect(FileManager.default.contents(atPath: mapPath).map(Array.init) == newMap)
        #expect(!FileManager.default.fileExists(atPath: oldMap))
        let status = try await station.properties.status(of: property)
        #expect((status.roomCount, status.panoramaCount, status.sync) == (1, 1, .synced))
    }
}
