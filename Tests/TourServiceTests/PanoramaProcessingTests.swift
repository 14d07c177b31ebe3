import Foundation
import Testing
import TestSupport
import TestTraits
import NTSQLKit
@testable import NTTourService

/// docs/api.md "Panorama": a panorama stored is processed in the background (its previews, its
/// tiles when it is large enough), and the host is told once what came of it.
@Suite(.hangGuard, .testThreads) struct PanoramaProcessingTests {
    private static func events(_ client: APIClient, _ type: String, of id: String) throws -> [[String: Any]] {
        try EventFeedTests.feed(client).filter { $0["type"] as? String == type && ($0["data"] as? [String: Any])?["id"] as? String == id }
    }

    @Test func aPanoramaIsReadyOnceItsPreviewsAndTilesAreMadeOrUnreadableWithTheReason() async throws {
        let harness = try ServiceHarness { $0.tileMinWidth = 1024 }
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
        // Its tiles were made before it was said ready: the page names them at once.
        let tiled = try await stored(harness, large)
        let pyramid = await harness.service.context.tiles.pyramid(tenant: tiled.tenant, tiled.panorama)
        #expect(pyramid != nil)
        let unreadable = try #require(try Self.events(client, "panorama.unreadable", of: damaged).first?["data"] as? [String: Any])
        #expect((unreadable["reason"] as? String)?.contains("JPEG") == true, "\(unreadable)")
        let document = try client.send("GET", "/v1/panoramas/\(damaged)")
        #expect(document.string("state") == "unreadable" && document.string("unreadableReason") == unreadable["reason"] as? String)
        // A processing that comes again (another daemon's, the sweep's) records nothing more.
        let again = try await stored(harness, small)
        await harness.service.context.process(again.tenant, again.panorama)
        #expect(try Self.events(client, "panorama.processed", of: small).count == 1)
        await harness.finish()
    }

    @Test func aPanoramaLeftProcessingByAStoppedDaemonIsProcessedByTheSweep() async throws {
        let harness = try ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID()
        #expect(try client.putPanorama(id, floorId: floorId, bytes: try JPEGFixture.panorama(width: 512)).status == 201)
        try await waitUntil("its processing") { try !Self.events(client, "panorama.processed", of: id).isEmpty }
        // As a daemon stopped mid-way leaves it: processing, its event not written.
        _ = try await harness.service.context.write { db in
            try await db.run("UPDATE panoramas SET state = 'processing' WHERE id = ?", id)
            return try await db.run("DELETE FROM events WHERE type = 'panorama.processed'")
        }
        #expect(try client.send("GET", "/v1/panoramas/\(id)").string("state") == "processing")
        await harness.service.context.processUnfinished()
        #expect(try Self.events(client, "panorama.processed", of: id).isEmpty) // stored too recently: its daemon may still be at it
        harness.clock.moveOn(seconds: Int64(harness.config.processingRetrySeconds) + 1)
        await harness.service.context.processUnfinished()
        #expect(try Self.events(client, "panorama.processed", of: id).count == 1)
        #expect(try client.send("GET", "/v1/panoramas/\(id)").string("state") == "ready")
        await harness.finish()
    }

    /// A stored panorama's tenant and row, as the service reads them.
    private func stored(_ harness: ServiceHarness, _ id: String) async throws -> (tenant: Int64, panorama: PanoramaRecord) {
        try await harness.service.context.read { db in
            let tenant = try await db.first("SELECT tenant_id FROM panoramas WHERE id = ?", id)?.decode(0, as: Int64.self) ?? 0
            guard let panorama = try await TourStore.panorama(db, tenant, id) else { throw StorageError(.corrupt, "no panorama \(id)") }
            return (tenant, panorama)
        }
    }
}
