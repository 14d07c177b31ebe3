import Foundation
import Testing
import TestSupport
import TestTraits

/// docs/api.md "Floors, plans and world maps": newScan, continueScan and planId idempotency.
@Suite(.hangGuard, .testThreads) struct FloorPlanAPITests {
    @Test func floorsAreCreatedThenUpdated() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let propertyId = newID(), floorId = newID()
        try client.putProperty(propertyId)
        #expect(try client.putFloor(propertyId, floorId, number: 0).status == 201)
        let again = try client.putFloor(propertyId, floorId, number: 0)
        #expect(again.status == 200)
        let renamed = try client.putFloor(propertyId, floorId, number: 1, name: "Loft")
        #expect(renamed.status == 200)
        #expect(renamed.string("name") == "Loft")
        #expect(renamed.int("number") == 1)
        #expect(renamed.json?["continuable"] as? Bool == false)
        #expect(try client.send("GET", "/v1/floors/\(floorId)").string("propertyId") == propertyId)
        // Under a property that does not exist, or moved to another property: refused.
        #expect(try client.putFloor(newID(), newID()).status == 404)
        let other = newID()
        try client.putProperty(other)
        let moved = try client.putFloor(other, floorId)
        #expect(moved.status == 409)
        #expect(moved.errorCode == "conflict")
        await harness.finish()
    }

    @Test func newScanReplacesTheRoomsAndReattachesPanoramasOfRemovedRooms() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let kitchen = newID(), hall = newID(), bath = newID()
        let first = try client.putPlan(floorId, mode: "newScan", rooms: [(kitchen, "Kitchen"), (hall, "Hall")])
        #expect(first.status == 200)
        #expect(first.int("planRevision") == 1)
        #expect(first.rooms.map { $0["id"] as? String } == [kitchen, hall])
        let panoramaInHall = newID()
        try client.putPanorama(panoramaInHall, floorId: floorId, roomId: hall, bytes: imageBytes(100))
        try client.putWorldMap(floorId, bytes: imageBytes(300))
        #expect(harness.storedFiles().contains { $0.hasPrefix("blobs/") && $0.contains("worldmaps") })

        let second = try client.putPlan(floorId, mode: "newScan", rooms: [(kitchen, "Kitchen 2"), (bath, "Bath")])
        #expect(second.status == 200)
        #expect(second.int("planRevision") == 2)
        #expect(second.rooms.map { $0["id"] as? String } == [kitchen, bath])
        #expect(second.rooms.first?["name"] as? String == "Kitchen 2")
        // The hall is gone; its panorama stays, on the floor.
        let panorama = try client.send("GET", "/v1/panoramas/\(panoramaInHall)")
        #expect(panorama.status == 200)
        #expect(panorama.json?["roomId"] is NSNull)
        #expect(panorama.string("floorId") == floorId)
        // The world map belonged to the old plan: cleared, file removed, not continuable.
        #expect(second.json?["continuable"] as? Bool == false)
        #expect(!harness.storedFiles().contains { $0.contains("worldmaps") })
        await harness.finish()
    }

    @Test func continueScanNeedsAPlanAndAWorldMap() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        // No plan yet.
        let noPlan = try client.putPlan(floorId, mode: "continueScan", rooms: [(newID(), "A")])
        #expect(noPlan.status == 409)
        #expect(noPlan.errorCode == "not_continuable")
        // A plan but no world map.
        try client.putPlan(floorId, mode: "newScan", rooms: [(newID(), "A")])
        let noMap = try client.putPlan(floorId, mode: "continueScan", rooms: [(newID(), "B")])
        #expect(noMap.status == 409)
        #expect(noMap.errorCode == "not_continuable")
        // Refusals change nothing.
        let floor = try client.send("GET", "/v1/floors/\(floorId)")
        #expect(floor.int("planRevision") == 1)
        #expect(floor.rooms.count == 1)
        await harness.finish()
    }

    @Test func continueScanAddsRoomsAndKeepsIdsNamesAndPanoramas() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let kitchen = newID(), hall = newID(), study = newID()
        try client.putPlan(floorId, mode: "newScan", rooms: [(kitchen, "Kitchen"), (hall, "Hall")])
        let panorama = newID()
        try client.putPanorama(panorama, floorId: floorId, roomId: kitchen, bytes: imageBytes(100))
        let map = try client.putWorldMap(floorId, bytes: imageBytes(400))
        #expect(map.status == 201)
        #expect(map.json?["continuable"] as? Bool == true)

        // The kitchen comes again with new geometry (and another name, which is not taken);
        // the hall is missing from the upload; the study is new.
        let continued = try client.putPlan(floorId, mode: "continueScan", rooms: [(kitchen, "Renamed"), (study, "Study")],
                                           outline: [[0, 0], [5, 0], [5, 5], [0, 5]])
        #expect(continued.status == 200)
        #expect(continued.int("planRevision") == 2)
        let rooms = continued.rooms
        #expect(rooms.map { $0["id"] as? String } == [kitchen, hall, study])
        #expect(rooms.map { $0["name"] as? String } == ["Kitchen", "Hall", "Study"])
        #expect((rooms[0]["outline"] as? [[Double]])?.count == 4) // geometry updated
        #expect(try client.send("GET", "/v1/panoramas/\(panorama)").string("roomId") == kitchen)
        #expect(continued.json?["continuable"] as? Bool == true)
        await harness.finish()
    }

    @Test func aPlanIdAlreadyAppliedAnswersTheStoredResultAndChangesNothing() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let planId = newID(), room = newID()
        let first = try client.putPlan(floorId, planId: planId, mode: "newScan", rooms: [(room, "Kitchen")])
        let resent = try client.putPlan(floorId, planId: planId, mode: "newScan", rooms: [(room, "Kitchen")])
        #expect(resent.status == 200)
        #expect(resent.body == first.body)
        #expect(try client.send("GET", "/v1/floors/\(floorId)").int("planRevision") == 1)
        // The same planId with other content is a conflict.
        let other = try client.putPlan(floorId, planId: planId, mode: "newScan", rooms: [(newID(), "Else")])
        #expect(other.status == 409)
        #expect(try client.send("GET", "/v1/floors/\(floorId)").rooms.map { $0["id"] as? String } == [room])
        await harness.finish()
    }

    @Test func aRoomCannotMoveToAnotherFloor() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorA) = try client.makeFloor()
        let floorB = newID()
        try client.putFloor(propertyId, floorB, number: 1)
        let room = newID()
        try client.putPlan(floorA, mode: "newScan", rooms: [(room, "Kitchen")])
        let moved = try client.putPlan(floorB, mode: "newScan", rooms: [(room, "Kitchen")])
        #expect(moved.status == 409)
        #expect(try client.send("GET", "/v1/floors/\(floorA)").rooms.count == 1)
        await harness.finish()
    }

    @Test(arguments: [
        (#"{"planId": "x", "mode": "newScan", "rooms": []}"#, "planId must be a lowercase UUID"),
        (#"{"planId": "11111111-1111-4111-8111-111111111111", "mode": "other", "rooms": []}"#, "mode must be newScan or continueScan"),
        (#"{"planId": "11111111-1111-4111-8111-111111111111", "mode": "newScan"}"#, "missing field rooms"),
        (#"{"planId": "11111111-1111-4111-8111-111111111111", "mode": "newScan", "rooms": [{"id": "22222222-2222-4222-8222-222222222222", "outline": [[0, 0], [1, 1]]}]}"#, "3 to 10000 points"),
        (#"{"planId": "11111111-1111-4111-8111-111111111111", "mode": "newScan", "rooms": [{"id": "22222222-2222-4222-8222-222222222222", "outline": [[0, 0], [1, "a"], [1, 1]]}]}"#, "outline must be"),
    ])
    func badPlansAre400(body: String, message: String) async throws {
        let harness = try await ServiceHarness()
        let client = harness.inProcess(harness.alpha)
        let (_, floorId) = try await client.makeFloor()
        let response = try await client.send("PUT", "/v1/floors/\(floorId)/plan", body: Array(body.utf8), headers: ["Content-Type": "application/json"])
        #expect(response.status == 400)
        #expect(response.text.contains(message), "\(response.text)")
        #expect(try await client.send("GET", "/v1/floors/\(floorId)").int("planRevision") == 0)
        await harness.finish()
    }

    @Test func aPlanThatIsNotJSONIs415() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let response = try client.send("PUT", "/v1/floors/\(floorId)/plan", body: Array("<plan/>".utf8), headers: ["Content-Type": "application/xml"])
        #expect(response.status == 415)
        #expect(response.errorCode == "unsupported_media_type")
        await harness.finish()
    }

    @Test func worldMapsAreCreatedReplacedAndResentWithoutChange() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        #expect(try client.putWorldMap(floorId, bytes: imageBytes(100)).status == 201)
        #expect(try client.putWorldMap(floorId, bytes: imageBytes(100)).status == 200)
        #expect(try client.putWorldMap(floorId, bytes: imageBytes(200, seed: 9)).status == 200)
        #expect(harness.storedFiles().filter { $0.contains("worldmaps") }.count == 1)
        #expect(harness.storedFiles().filter { $0.hasPrefix("tmp/") }.isEmpty)
        #expect(try client.putWorldMap(newID(), bytes: imageBytes(10)).status == 404)
        let wrongType = try client.send("PUT", "/v1/floors/\(floorId)/worldmap", body: [1, 2], headers: ["Content-Type": "text/plain"])
        #expect(wrongType.status == 415)
        await harness.finish()
    }

    /// Another station downloads the world map to continue the floor: the bytes, the digest as
    /// ETag, ranges, 304 for the map it has; 404 for a floor without one.
    @Test func theWorldMapIsReadBackWithItsDigest() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let none = try client.send("GET", "/v1/floors/\(floorId)/worldmap")
        #expect(none.status == 404)
        #expect(none.errorCode == "not_found")
        let map = imageBytes(3000, seed: 4)
        try client.putWorldMap(floorId, bytes: map)
        let whole = try client.send("GET", "/v1/floors/\(floorId)/worldmap")
        #expect(whole.status == 200)
        #expect(whole.body == map)
        #expect(whole.header("Content-Type") == "application/octet-stream")
        #expect(whole.header("ETag") == "\"\(sha256Hex(map))\"")
        let part = try client.send("GET", "/v1/floors/\(floorId)/worldmap", headers: ["Range": "bytes=100-199"])
        #expect(part.status == 206)
        #expect(part.body == Array(map[100..<200]))
        #expect(try client.send("GET", "/v1/floors/\(floorId)/worldmap", headers: ["If-None-Match": "\"\(sha256Hex(map))\""]).status == 304)
        // Replaced: the new map is what comes back.
        let newer = imageBytes(500, seed: 8)
        try client.putWorldMap(floorId, bytes: newer)
        #expect(try client.send("GET", "/v1/floors/\(floorId)/worldmap").body == newer)
        #expect(try client.send("GET", "/v1/floors/\(newID())/worldmap").status == 404)
        await harness.finish()
    }

    /// Capture output nested past maxJsonDepth (64 by default) is a 400 that says so; at the
    /// limit it is kept.
    @Test func captureNestedPastTheDepthLimitIs400() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        func plan(captureDepth: Int) -> [UInt8] {
            let capture = String(repeating: "[", count: captureDepth) + String(repeating: "]", count: captureDepth)
            return Array(#"{"planId": "\#(newID())", "mode": "newScan", "rooms": [{"id": "\#(newID())", "outline": [[0,0],[1,0],[1,1]], "capture": \#(capture)}]}"#.utf8)
        }
        // The body's own nesting is 4 (object, rooms, room, capture's first array is the 4th).
        let refused = try client.send("PUT", "/v1/floors/\(floorId)/plan", body: plan(captureDepth: 62), headers: ["Content-Type": "application/json"])
        #expect(refused.status == 400)
        #expect(refused.text.contains("nested deeper than 64 levels"), "\(refused.text)")
        let kept = try client.send("PUT", "/v1/floors/\(floorId)/plan", body: plan(captureDepth: 61), headers: ["Content-Type": "application/json"])
        #expect(kept.status == 200, "\(kept.text)")
        await harness.finish()
    }
}
