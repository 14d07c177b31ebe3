import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

@Suite(.hangGuard, .testThreads) struct PanoramaCaptureTests {
    @Test(arguments: [
        (CaptureReadings(iso: 2001, shutterSeconds: 0.01), true),
        (CaptureReadings(iso: 2000, shutterSeconds: 0.01), false),
        (CaptureReadings(iso: 100, shutterSeconds: 1.0 / 14), true),
        (CaptureReadings(iso: 100, shutterSeconds: 1.0 / 15), false),
    ])
    func veryLowLightBlocksTheShot(readings: CaptureReadings, blocked: Bool) {
        #expect((PanoramaGrading.lightBlock(readings) != nil) == blocked)
    }

    @Test(arguments: [
        (CaptureReadings(iso: 100, shutterSeconds: 0.01, tiltDegrees: -16), DiscardReason.tilt(degrees: -16)),
        (CaptureReadings(iso: 100, shutterSeconds: 0.01, sweepDegreesPerSecond: 61), .sweepTooFast(degreesPerSecond: 61)),
        (CaptureReadings(iso: 100, shutterSeconds: 0.01, shake: 0.6), .shake(radiansPerSecond: 0.6)),
        (CaptureReadings(iso: 100, shutterSeconds: 0.01, reversalDegrees: 21), .sweepReversed(degrees: 21)),
    ])
    func badEnoughBreachesDiscard(readings: CaptureReadings, reason: DiscardReason) {
        #expect(PanoramaGrading.discard(readings) == reason)
    }

    @Test func warningsBelowTheThresholdsKeepThePanorama() {
        #expect(PanoramaGrading.discard(CaptureReadings(iso: 100, shutterSeconds: 0.01, tiltDegrees: 10, sweepDegreesPerSecond: 50,
                                                        shake: 0.4, reversalDegrees: 10)) == nil)
    }

    @Test func keptPanoramasReachTheStoreAndTheQueueAndCountForTheSession() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let session = try await tours.panoramaCapture.session(floor: floor)
        let folder = try recordedFolder()
        let outcome = try await session.record(folder: folder, image: "pano.jpg", readings: good)
        guard case .kept(let id) = outcome else { Issue.record("not kept: \(outcome)"); return }
        #expect(!FileManager.default.fileExists(atPath: folder.path)) // the capture's folder is gone
        let stored = try await tours.store.read { db in try db.first("SELECT path, size, content_type FROM panoramas WHERE id = ?", id) }
        #expect(try stored?.decodeIfPresent("size", as: Int.self) == 4096)
        #expect(try stored?.decodeIfPresent("content_type", as: String.self) == "image/jpeg")
        #expect(try FileManager.default.fileExists(atPath: stored?.decodeIfPresent("path", as: String.self) ?? ""))
        let queued = try await tours.store.read { db in try db.first("SELECT count(*) FROM queue_items WHERE kind = 'panorama' AND entity_id = ?", id)?.decodeIfPresent(0, as: Int.self) }
        #expect(queued == 1)
        _ = try await session.record(folder: try recordedFolder(), image: "pano.jpg", readings: good)
        #expect(await session.finish() == .finished(floor, capturedInSession: 2))
        // Another visit counts its own only.
        let second = try await tours.panoramaCapture.session(floor: floor)
        _ = try await second.record(folder: try recordedFolder(), image: "pano.jpg", readings: good)
        #expect(await second.finish() == .finished(floor, capturedInSession: 1))
        #expect(try await tours.properties.status(of: property).panoramaCount == 3)
    }

    @Test func discardedAndBlockedPanoramasNeverReachTheStoreOrTheQueue() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let queueBefore = try await tours.store.read { db in try db.first("SELECT count(*) FROM queue_items")?.decodeIfPresent(0, as: Int.self) }
        let session = try await tours.panoramaCapture.session(floor: floor)
        let shaky = try recordedFolder()
        let outcome = try await session.record(folder: shaky, image: "pano.jpg", readings: CaptureReadings(iso: 400, shutterSeconds: 0.01, shake: 0.9))
        #expect(outcome == .discarded(.shake(radiansPerSecond: 0.9)))
        #expect(!FileManager.default.fileExists(atPath: shaky.path))
        let dark = try recordedFolder()
        await #expect(throws: NoughtyToursError.self) {
            _ = try await session.record(folder: dark, image: "pano.jpg", readings: CaptureReadings(iso: 6400, shutterSeconds: 0.01))
        }
        #expect(!FileManager.default.fileExists(atPath: dark.path))
        #expect(try await tours.properties.status(of: property).panoramaCount == 0)
        #expect(try await tours.store.read { db in try db.first("SELECT count(*) FROM queue_items")?.decodeIfPresent(0, as: Int.self) } == queueBefore)
        #expect(await session.finish() == .finished(floor, capturedInSession: 0))
        let panoramaFiles = try FileManager.default.contentsOfDirectory(atPath: tours.store.directory.appendingPathComponent("panoramas").path)
        #expect(panoramaFiles.isEmpty)
    }

    @Test func checkLightBlocksBeforeRecording() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let session = try await tours.panoramaCapture.session(floor: floor)
        do {
            try await session.checkLight(CaptureReadings(iso: 3200, shutterSeconds: 0.01))
            Issue.record("very low light did not block")
        } catch {
            guard case .captureBlocked = error else { Issue.record("expected captureBlocked, got \(error)"); return }
        }
        try await session.checkLight(good)
    }

    @Test func newScanKeepsThePanoramasOfRemovedRoomsOnTheFloor() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let square: [[Double]] = [[0, 0], [3, 0], [3, 3]]
        let rooms = try await tours.structureCapture.apply(floor: floor, mode: .newScan,
                                                           rooms: [CapturedRoom(name: "Hall", outline: square), CapturedRoom(name: "Bath", outline: square)])
        let session = try await tours.panoramaCapture.session(room: rooms[0])
        guard case .kept(let id) = try await session.record(folder: try recordedFolder(name: "pano.png"), image: "pano.png", readings: good) else {
            Issue.record("not kept"); return
        }
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(room: rooms[1], name: "Bath", outline: square)])
        let row = try await tours.store.read { db in try db.first("SELECT floor_id, room_id FROM panoramas WHERE id = ?", id) }
        #expect(try row?.decodeIfPresent("floor_id", as: String.self) == floor.id)
        #expect(try row?.decodeIfPresent("room_id", as: String.self) == nil)
        #expect(try await tours.properties.status(of: property).panoramaCount == 1)
    }
}

@Suite(.hangGuard, .testThreads) struct QueueItemTests {
    /// Each write queues its uploads with it, in dependency order: property, floors, plan,
    /// then world map and panoramas after the plan.
    @Test func writesQueueTheirUploadsInDependencyOrder() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 2)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let map = testDirectory("map")
        try Data([9, 9]).write(to: map)
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "Hall", outline: [[0, 0], [2, 0], [2, 2]])],
                                               worldMap: map)
        let folder = testDirectory("capture")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(ImageSignature.jpeg).write(to: folder.appendingPathComponent("p.jpg"))
        _ = try await tours.panoramaCapture.session(floor: floor).record(folder: folder, image: "p.jpg", readings: CaptureReadings(iso: 100, shutterSeconds: 0.01))

        let items = try await tours.store.read { db in
            try db.query("SELECT id, kind, entity_id, depends_on, state FROM queue_items ORDER BY id").map {
                (id: try $0.decode(0, as: Int64.self), kind: try $0.decode(1, as: String.self), entity: try $0.decode(2, as: String.self), dependsOn: try $0.decodeIfPresent(3, as: Int64.self), state: try $0.decode(4, as: String.self))
            }
        }
        #expect(items.map(\.kind) == ["property", "floor", "floor", "plan", "worldmap", "panorama"])
        #expect(items.allSatisfy { $0.state == "pending" })
        let byKind = Dictionary(grouping: items, by: \.kind)
        let propertyItem = try #require(byKind["property"]?.first)
        #expect(propertyItem.dependsOn == nil)
        #expect(byKind["floor"]?.allSatisfy { $0.dependsOn == propertyItem.id } == true)
        let planItem = try #require(byKind["plan"]?.first)
        #expect(planItem.dependsOn == byKind["floor"]?.first { $0.entity == floor.id }?.id)
        #expect(byKind["worldmap"]?.first?.dependsOn == planItem.id)
        #expect(byKind["panorama"]?.first?.dependsOn == planItem.id)

        // Deleting the property drops its pending uploads and queues the deletion instead.
        try await tours.properties.deleteProperty(property)
        let left = try await tours.store.read { db in try db.query("SELECT kind FROM queue_items").compactMap { try $0.decodeIfPresent(0, as: String.self) } }
        #expect(left == ["deleteProperty"])
    }
}
