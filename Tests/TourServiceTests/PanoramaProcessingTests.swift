import Foundation
import Testing
import TestSupport
import TestTraits
import NTSQLKit
import Synchronization
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// docs/api.md "Panorama": a panorama stored is processed in the background (its previews, its
/// tiles when it is large enough), and the host is told once what came of it.
@Suite(.hangGuard, .testThreads) struct PanoramaProcessingTests {
    private static func events(_ client: APIClient, _ type: String, of id: String) throws -> [[String: Any]] {
        try EventFeedTests.feed(client).filter { $0["type"] as? String == type && ($0["data"] as? [String: Any])?["id"] as? String == id }
    }

    @Test func aPanoramaIsReadyOnceItsPreviewsAndTilesAreMadeOrUnreadableWithTheReason() async throws {
        let harness = try await ServiceHarness { $0.tileMinWidth = 1024 }
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let (small, large, damaged, heic) = (newID(), newID(), newID(), newID())
        #expect(try client.putPanorama(small, floorId: floorId, bytes: try JPEGFixture.panorama(width: 512)).status == 201)
        #expect(try client.putPanorama(large, floorId: floorId, bytes: try JPEGFixture.panorama(width: 2048)).status == 201)
        #expect(try client.putPanorama(damaged, floorId: floorId, bytes: imageBytes(5_000)).status == 201)
        #expect(try client.putPanorama(heic, floorId: floorId, bytes: try HEICFixture.make(width: 512, height: 256) { _, y in (UInt8(y), 90, 200) },
                                       contentType: "image/heic").status == 201)
        try await waitUntil("every panorama's outcome", seconds: 60) {
            try [small, large, heic].allSatisfy { try !Self.events(client, "panorama.processed", of: $0).isEmpty }
                && !Self.events(client, "panorama.unreadable", of: damaged).isEmpty
        }
        for id in [small, large, heic] {
            let processed = try Self.events(client, "panorama.processed", of: id)
            #expect(processed.count == 1)
            let data = try #require(processed.first?["data"] as? [String: Any])
            #expect(data["floorId"] as? String == floorId && data["previewWidths"] as? [Int] == harness.config.previewWidths)
            #expect(data["tiles"] as? Bool == (id == large), "\(id)")
            let document = try client.send("GET", "/v1/panoramas/\(id)")
            #expect(document.string("state") == "ready" && document.json?["unreadableReason"] is NSNull)
        }
        // Its tiles were made before it was said ready, by the daemon that processed it: its
        // pages name them at once.
        let tiled = try await stored(harness, large)
        var pyramids = 0
        for service in harness.services where await service.images.tiles.pyramid(tenant: tiled.tenant, tiled.panorama) != nil { pyramids += 1 }
        #expect(pyramids >= 1)
        let unreadable = try #require(try Self.events(client, "panorama.unreadable", of: damaged).first?["data"] as? [String: Any])
        #expect((unreadable["reason"] as? String)?.contains("JPEG") == true, "\(unreadable)")
        let document = try client.send("GET", "/v1/panoramas/\(damaged)")
        #expect(document.string("state") == "unreadable" && document.string("unreadableReason") == unreadable["reason"] as? String)
        // A processing that comes again (another daemon's, the sweep's) records nothing more.
        let again = try await stored(harness, small)
        await harness.service.images.process(again.tenant, again.panorama)
        #expect(try Self.events(client, "panorama.processed", of: small).count == 1)
        await harness.finish()
    }

    @Test func aPanoramaLeftProcessingByAStoppedDaemonIsProcessedByTheSweep() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID()
        #expect(try client.putPanorama(id, floorId: floorId, bytes: try JPEGFixture.panorama(width: 512)).status == 201)
        // Its processing over: recorded, and listed as processing by no daemon.
        try await waitUntil("its processing") {
            try !Self.events(client, "panorama.processed", of: id).isEmpty
                && harness.services.allSatisfy { $0.images.queue.metrics.contains("toursd_panoramas_processing 0") }
        }
        // As a daemon stopped mid-way leaves it: processing, its event not written.
        _ = try await harness.service.records.write { db in
            try await db.run("UPDATE panoramas SET state = 'processing' WHERE id = ?", id)
            return try await db.run("DELETE FROM events WHERE type = 'panorama.processed'")
        }
        #expect(try client.send("GET", "/v1/panoramas/\(id)").string("state") == "processing")
        await harness.service.images.processUnfinished()
        #expect(try Self.events(client, "panorama.processed", of: id).isEmpty) // stored too recently: its daemon may still be at it
        harness.clock.moveOn(seconds: Int64(harness.config.processingRetrySeconds) + 1)
        await harness.service.images.processUnfinished()
        #expect(try Self.events(client, "panorama.processed", of: id).count == 1)
        #expect(try client.send("GET", "/v1/panoramas/\(id)").string("state") == "ready")
        await harness.finish()
    }

    /// What the file says of its geometry is read when it is processed and shown with where
    /// each part came from; a heading the upload gave wins over the file's.
    @Test func aPanoramasDocumentSaysWhatItsFileToldOfItsGeometry() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let crop = PhotoSphereFixture.Crop(fullWidth: 2048, fullHeight: 1024, left: 512, top: 256, width: 1024, height: 512)
        let image = PhotoSphereFixture.jpeg(width: 1024, height: 512) { _, _ in (200, 40, 40) }
        let tagged = PhotoSphereFixture.tagged(image, exif: PhotoSphereFixture.exif(orientation: 3), xmp: PhotoSphereFixture.xmp(crop: crop, heading: 90))
        let (fromFile, fromUpload, plain) = (newID(), newID(), newID())
        #expect(try client.putPanorama(fromFile, floorId: floorId, bytes: tagged).status == 201)
        #expect(try client.send("PUT", "/v1/panoramas/\(fromUpload)?floorId=\(floorId)&x=1&y=2&heading=180", body: tagged,
                                headers: ["Content-Type": "image/jpeg"]).status == 201)
        #expect(try client.putPanorama(plain, floorId: floorId, bytes: image).status == 201)
        // Unknown until it is processed.
        try await waitUntil("every panorama processed") {
            try [fromFile, fromUpload, plain].allSatisfy { try client.send("GET", "/v1/panoramas/\($0)").string("state") == "ready" }
        }
        let geometry = { (id: String) throws -> [String: Any] in try #require(try client.send("GET", "/v1/panoramas/\(id)").json?["geometry"] as? [String: Any]) }
        let read = try geometry(fromFile)
        #expect(read["crop"] as? [String: Int] == ["fullWidth": 2048, "fullHeight": 1024, "left": 512, "top": 256, "width": 1024, "height": 512])
        #expect(read["heading"] as? Double == 90 && read["orientation"] as? Int == 3 && read["projection"] as? String == "equirectangular")
        #expect(read["sources"] as? [String: String] == ["crop": "file", "heading": "file", "orientation": "file", "projection": "file"])
        let uploaded = try geometry(fromUpload)
        #expect(uploaded["heading"] as? Double == 180 && (uploaded["sources"] as? [String: String])?["heading"] == "upload")
        let assumed = try geometry(plain)
        #expect(assumed["crop"] is NSNull && assumed["heading"] is NSNull && assumed["orientation"] as? Int == 1)
        let sources = try #require(assumed["sources"] as? [String: Any])
        #expect(sources.compactMapValues { $0 as? String } == ["crop": "assumed", "orientation": "assumed", "projection": "assumed"] && sources["heading"] is NSNull)
        await harness.finish()
    }

    /// docs/api.md "Floors, plans and world maps": a room's panoramas are walked as they were
    /// captured (the file's EXIF), not as uploaded, until the tenant sets an order; the order
    /// set is the walk's, in the API and on the share link's pages; an id not of the floor is 400.
    @Test func theWalkFollowsTheCaptureThenTheOrderTheTenantSets() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let roomId = newID()
        #expect(try client.putPlan(floorId, mode: "newScan", rooms: [(roomId, "Living room")]).status == 200)
        let image = PhotoSphereFixture.jpeg(width: 256, height: 128) { _, _ in (200, 40, 40) }
        // B uploaded first, but taken an hour after A.
        let (b, a) = (newID(), newID())
        for (id, taken) in [(b, "2026:12:01 11:00:00"), (a, "2026:12:01 10:00:00")] {
            let tagged = PhotoSphereFixture.tagged(image, exif: PhotoSphereFixture.exif(taken: taken))
            #expect(try client.send("PUT", "/v1/panoramas/\(id)?floorId=\(floorId)&roomId=\(roomId)", body: tagged, headers: ["Content-Type": "image/jpeg"]).status == 201)
        }
        try await waitUntil("both processed") { try [a, b].allSatisfy { try client.send("GET", "/v1/panoramas/\($0)").string("state") == "ready" } }
        #expect(try client.send("GET", "/v1/panoramas/\(a)").string("capturedAt") == "2026-12-01T10:00:00")
        let tourId = try #require(try client.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let url = try #require(try client.send("POST", "/v1/tours/\(tourId)/shares", json: [:]).string("url"))
        let visitor = try harness.client(nil)
        #expect(try visitor.send("GET", "\(url)/panoramas/\(a)").text.contains("<h1>Living room · 1 of 2</h1>"), "taken first, walked first")
        // The tenant's order wins.
        let ordered = try client.send("PUT", "/v1/floors/\(floorId)/panorama-order", json: ["panoramaIds": [b, a]])
        #expect(ordered.status == 200 && (ordered.json?["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [b, a])
        #expect(try client.send("GET", "/v1/panoramas/\(b)").json?["order"] as? Int == 0)
        #expect(try visitor.send("GET", "\(url)/panoramas/\(b)").text.contains("<h1>Living room · 1 of 2</h1>"))
        // The floor's event says its walk changed.
        let events = try #require(try client.send("GET", "/v1/events?limit=100").json?["items"] as? [[String: Any]])
        #expect(events.contains { $0["type"] as? String == "floor.updated" && ($0["data"] as? [String: Any])?["floorId"] as? String == floorId })
        // A partial order: the listed first, the others after them, their order cleared.
        let partial = try client.send("PUT", "/v1/floors/\(floorId)/panorama-order", json: ["panoramaIds": [b]])
        #expect((partial.json?["items"] as? [[String: Any]])?.map { $0["order"] as? Int } == [0, nil])
        #expect((partial.json?["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [b, a])
        // Refused, changing nothing: an id of no panorama of the floor, one twice, not a list.
        for (body, message) in [(["panoramaIds": [a, newID()]] as [String: Any], "not a panorama of floor"), (["panoramaIds": [a, a]], "twice"),
                                (["panoramaIds": "a"], "must be an array")] {
            let refused = try client.send("PUT", "/v1/floors/\(floorId)/panorama-order", json: body)
            #expect(refused.status == 400 && refused.text.contains(message), "\(body): \(refused.text)")
        }
        #expect(try client.send("GET", "/v1/panoramas/\(b)").json?["order"] as? Int == 0)
        #expect(try client.send("PUT", "/v1/floors/\(newID())/panorama-order", json: ["panoramaIds": []]).status == 404)
        #expect(try harness.client(harness.beta).send("PUT", "/v1/floors/\(floorId)/panorama-order", json: ["panoramaIds": [a]]).status == 404)
        // Cleared: as captured again.
        #expect(try client.send("PUT", "/v1/floors/\(floorId)/panorama-order", json: ["panoramaIds": []]).status == 200)
        #expect(try visitor.send("GET", "\(url)/panoramas/\(a)").text.contains("<h1>Living room · 1 of 2</h1>"))
        await harness.finish()
    }

    /// A stored panorama's tenant and row, as the service reads them.
    private func stored(_ harness: ServiceHarness, _ id: String) async throws -> (tenant: Int64, panorama: PanoramaRecord) {
        try await harness.service.records.read { db in
            let tenant = try await db.first("SELECT tenant_id FROM panoramas WHERE id = ?", id)?.decode(0, as: Int64.self) ?? 0
            guard let panorama = try await TourStore.panorama(db, tenant, id) else { throw StorageError(.corrupt, "no panorama \(id)") }
            return (tenant, panorama)
        }
    }
}
