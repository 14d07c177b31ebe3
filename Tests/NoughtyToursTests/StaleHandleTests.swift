import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// docs/client.md "Stale handles stay safe": handles outlive what they name; the library neither
/// diverges from the server nor blames the disk.
@Suite(.hangGuard, .testThreads) struct StaleHandleTests {
    private static let square: [[Double]] = [[0, 0], [3, 0], [3, 3]]

    /// A capture session into a room that a newScan removes meanwhile: the panorama goes to
    /// the floor, locally as on the server, and uploads.
    @Test func aPanoramaIntoARoomANewScanRemovedGoesToItsFloorAndUploads() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let tours = try await makeSyncingLibrary(server: server.url, token: server.token)
        let property = try await tours.properties.createProperty(name: "Removed room", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let rooms = try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
            CapturedRoom(name: "Gone", outline: Self.square), CapturedRoom(name: "Stays", outline: Self.square),
        ])
        let session = try await tours.panoramaCapture.session(room: rooms[0])
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(room: rooms[1], name: "Stays", outline: Self.square)])
        let panorama = try await capturePanorama(session)
        let roomId = try await tours.store.read { db in try db.first("SELECT room_id FROM panoramas WHERE id = ?", panorama)?.decodeIfPresent(0, as: String.self) }
        #expect(roomId == nil)
        try await drain(tours)
        #expect(try await tours.properties.uploadFailures(of: property).isEmpty)
        #expect(try await tours.properties.status(of: property).isComplete)
        let stored = try server.json("/v1/panoramas/\(panorama)")
        #expect(stored["roomId"] is NSNull && stored["floorId"] as? String == floor.id)
    }

    /// A room handle taken before a rename still names its room: a newScan keeps it (here and
    /// on the server), a continueScan updates it instead of adding a copy.
    @Test func roomsAreMatchedByIdAloneNotByTheirName() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let tours = try await makeSyncingLibrary(server: server.url, token: server.token)
        let property = try await tours.properties.createProperty(name: "Renamed", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let taken = try #require(try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "Bedroom", outline: Self.square)]).first)
        let renamed = try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(room: taken, name: "Nursery", outline: Self.square)])
        #expect(renamed.map(\.id) == [taken.id] && renamed.first?.name == "Nursery")
        // The old handle (name "Bedroom") in a newScan: the same room, kept.
        let kept = try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(room: taken, name: "Nursery", outline: [[0, 0], [4, 0], [4, 4]])],
                                                          worldMap: try worldMapFile())
        #expect(kept.map(\.id) == [taken.id])
        // And in a continueScan: updated, not duplicated.
        let continued = try await tours.structureCapture.apply(floor: floor, mode: .continueScan, rooms: [CapturedRoom(room: taken, name: nil, outline: Self.square)])
        #expect(continued.map(\.id) == [taken.id] && continued.first?.name == "Nursery")
        try await drain(tours)
        #expect(try await tours.properties.uploadFailures(of: property).isEmpty)
        let serverRooms = try #require(try server.json("/v1/floors/\(floor.id)")["rooms"] as? [[String: Any]])
        #expect(serverRooms.map { $0["id"] as? String } == [taken.id])
        #expect(serverRooms.map { $0["name"] as? String } == ["Nursery"])
    }

    /// A deleted property, floor or room: `notFound` in every call, never `storageUnavailable`.
    @Test func deletedHandlesAreNotFoundInEveryCall() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Deleted", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let room = try #require(try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "R", outline: Self.square)]).first)
        let floorSession = try await tours.panoramaCapture.session(floor: floor)
        let roomSession = try await tours.panoramaCapture.session(room: room)
        try await tours.properties.deleteProperty(property)

        let calls: [(String, () async throws -> Void)] = [
            ("floors(of:)", { _ = try await tours.properties.floors(of: property) }),
            ("rooms(of:)", { _ = try await tours.properties.rooms(of: floor) }),
            ("status(of:)", { _ = try await tours.properties.status(of: property) }),
            ("uploadFailures(of:)", { _ = try await tours.properties.uploadFailures(of: property) }),
            ("deleteProperty", { try await tours.properties.deleteProperty(property) }),
            ("isContinuable", { _ = try await tours.structureCapture.isContinuable(floor) }),
            ("continuableFloors(of:)", { _ = try await tours.structureCapture.continuableFloors(of: property) }),
            ("apply", { try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: []) }),
            ("saveWorldMap", { try await tours.structureCapture.saveWorldMap(try worldMapFile(), for: floor) }),
            ("session(floor:)", { _ = try await tours.panoramaCapture.session(floor: floor) }),
            ("session(room:)", { _ = try await tours.panoramaCapture.session(room: room) }),
            ("record into the floor", { _ = try await capturePanorama(floorSession) }),
            ("record into the room", { _ = try await capturePanorama(roomSession) }),
        ]
        for (name, call) in calls {
            do {
                try await call()
                Issue.record("\(name) succeeded on a deleted handle")
            } catch let error as NoughtyToursError {
                #expect(error == .notFound, "\(name): \(error)")
            }
        }
        #expect(try await tours.store.read { db in try db.first("SELECT count(*) FROM panoramas")?.decodeIfPresent(0, as: Int.self) } == 0)
    }

    /// A room removed by a newScan is a deleted room handle for later calls.
    @Test func aRemovedRoomIsNotFoundForANewSessionOrPlan() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Removed", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let room = try #require(try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "R", outline: Self.square)]).first)
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "Other", outline: Self.square)])
        await #expect(throws: NoughtyToursError.notFound) { try await tours.panoramaCapture.session(room: room) }
        await #expect(throws: NoughtyToursError.notFound) {
            try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(room: room, name: "R", outline: Self.square)])
        }
        #expect(try await tours.properties.rooms(of: floor).map(\.name) == ["Other"])
    }
}

/// A small saved world map.
func worldMapFile() throws -> URL {
    let url = testDirectory("map").appendingPathExtension("bin")
    try Data(repeating: 7, count: 2048).write(to: url)
    return url
}
