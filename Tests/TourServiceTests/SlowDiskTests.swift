import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// Nothing that waits on a disk runs on an event loop: with the file I/O pool stalled (a disk
/// that takes seconds), requests that need no file are answered on other connections while it
/// stays stalled.
@Suite(.hangGuard, .testThreads) struct SlowDiskTests {
    /// A disk that holds every file operation from `stall` to `release`, except those the test
    /// lets through (`admit`). Each is held a minute at most, so nothing hangs; a test that
    /// fails before its `release` lets go at its end.
    final class StalledDisk: Sendable {
        private struct State {
            var on = false
            /// Operations that found the disk stalled, numbered from 1 in the order they came.
            var arrived = 0
            /// The ones still held, by number.
            var held: [Int: DispatchSemaphore] = [:]
        }
        private let state = Mutex(State())

        /// The pool's hook: blocks the pool thread while stalled, as a slow disk would.
        func pass() {
            let gate = state.withLock { state -> DispatchSemaphore? in
                guard state.on else { return nil }
                state.arrived += 1
                let gate = DispatchSemaphore(value: 0)
                state.held[state.arrived] = gate
                return gate
            }
            _ = gate?.wait(timeout: .now() + .seconds(60))
        }

        func stall() { state.withLock { $0.on = true } }

        /// File operations that found the disk stalled.
        var stalledOperations: Int { state.withLock { $0.arrived } }

        /// Lets the operations numbered up to `last` through; later ones stay held.
        func admit(upTo last: Int) { open { $0 <= last } }

        /// Ends the stall: held operations go on, but those numbered after `keepingAfter`.
        func release(keepingAfter last: Int = .max) {
            state.withLock { $0.on = false }
            open { $0 <= last }
        }

        private func open(_ which: (Int) -> Bool) {
            let gates = state.withLock { state -> [DispatchSemaphore] in
                let numbers = state.held.keys.filter(which)
                return numbers.compactMap { state.held.removeValue(forKey: $0) }
            }
            for gate in gates { gate.signal() }
        }
    }

    @Test func healthzAndAnAuthenticatedReadAreAnsweredWhileAnUploadsWritesStall() async throws {
        let disk = StalledDisk()
        defer { disk.release() }
        // One daemon even in a balanced run: the hook stalls every daemon of the process, and a
        // balancer in front would buffer the body the test holds back. The upload's body timeout
        // is longer than the test: between its first part and the rest, the stall may end by its
        // own limit and the server read on (on a loaded CI run the 30 s default ran out).
        // A daemon's four file threads (not a harness's two): the stall holds some of them.
        let harness = try await ServiceHarness(alone: true, configure: { $0.bodyTimeoutMs = 150_000; $0.ioThreads = 4 }, beforeEachFileJob: { disk.pass() })
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        disk.stall()

        // An upload whose disk work stalls: its head and a first part are sent, the rest waits in
        // the client while the server holds back (its stream is full). The part is small enough
        // for the sockets' buffers: a larger one blocked the test's thread for the whole stall.
        let image = imageBytes(4 << 20)
        let uploader = try RawClient(port: harness.port, timeoutSeconds: 30)
        let panoramaId = newID()
        try uploader.send("PUT /v1/panoramas/\(panoramaId)?floorId=\(floorId) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.alpha)\r\n"
                          + "Content-Type: image/jpeg\r\nContent-Length: \(image.count)\r\n\r\n")
        try uploader.send(Array(image[0..<(1 << 16)]))
        try await waitUntil("the upload to reach the stalled disk") { disk.stalledOperations > 0 }

        // Meanwhile, on other connections: each answered with the disk still stalled (a client
        // that waits 10 s gives up: a request held by the disk would wait the stall's minute).
        let health = try APIClient(port: harness.port, token: nil, timeoutSeconds: 10)
        let reader = try APIClient(port: harness.port, token: harness.alpha, timeoutSeconds: 10)
        for _ in 0..<20 {
            #expect(try health.send("GET", "/healthz").status == 200)
            #expect(try reader.send("GET", "/v1/properties/\(propertyId)").status == 200)
        }
        #expect(try await harness.service.records.read { try await $0.first("SELECT count(*) FROM panoramas")?.decodeIfPresent(0, as: Int.self) } == 0) // still stalled

        // The disk comes back: the upload completes whole.
        disk.release()
        let rest = Array(image[(1 << 16)...])
        try uploader.send(rest)
        let stored = try uploader.readResponse()
        #expect(stored.status == 201)
        #expect(stored.json?["sha256"] as? String == sha256Hex(image))
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)/content").body == image)
        await harness.finish()
    }

    /// Past `previewQueueLimit` distinct previews waiting, a preview request is told 503 with
    /// Retry-After at once; the waiting one is made once the disk comes back.
    @Test func previewsPastTheQueueLimitAre503WithRetryAfter() async throws {
        let disk = StalledDisk()
        defer { disk.release() }
        // One daemon even in a balanced run: the queue is a daemon's own.
        // A daemon's four file threads (not a harness's two): the stall holds some of them.
        let harness = try await ServiceHarness(alone: true, configure: { $0.previewQueueLimit = 1; $0.ioThreads = 4 }, beforeEachFileJob: { disk.pass() })
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let (first, second) = (newID(), newID())
        for id in [first, second] {
            #expect(try client.putPanorama(id, floorId: floorId, bytes: try JPEGFixture.panorama(width: 512), contentType: "image/jpeg").status == 201)
        }
        // Their processing made their previews; gone from the cache (the daemon's and, with a
        // bucket, the shared one), they are made again when asked.
        try await waitUntil("their processing") { try [first, second].allSatisfy { try client.send("GET", "/v1/panoramas/\($0)").string("state") == "ready" } }
        let tenant = try await harness.service.records.read { try await $0.first("SELECT tenant_id FROM panoramas WHERE id = ?", first)?.decode(0, as: Int64.self) }
        await harness.service.images.previews.remove(tenant: try #require(tenant), ids: [first, second])
        disk.stall()
        // The first preview's request: what it does on the disk goes through (a look for a cached
        // file, a task's turn on the file pool) until its making is listed; what the making does
        // there next stays held.
        let waiting = try RawClient(port: harness.port, timeoutSeconds: 30)
        try waiting.send("GET /v1/panoramas/\(first)/preview HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.alpha)\r\n\r\n")
        var admitted = 0
        try await waitUntil("the first preview's making to be listed") {
            let arrived = disk.stalledOperations
            guard (try? client.send("GET", "/metrics").text.contains("toursd_previews_waiting 1")) == true else {
                disk.admit(upTo: arrived) // none of the making's: it was not listed yet
                admitted = arrived
                return false
            }
            return true
        }
        try await waitUntil("the making to wait on the disk") { disk.stalledOperations > admitted }
        // The disk is back for everyone else: the second preview finds the queue full.
        disk.release(keepingAfter: admitted)
        let refused = try client.send("GET", "/v1/panoramas/\(second)/preview")
        #expect(refused.status == 503 && refused.errorCode == "unavailable" && refused.header("Retry-After") != nil, "\(refused.status)")
        disk.release()
        let made = try waiting.readResponse()
        #expect(made.status == 200 && JPEGFixture.dimensions(made.body) == [320, 160])
        await harness.finish()
    }
}
