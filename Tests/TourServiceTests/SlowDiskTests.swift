import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import TourService

/// Nothing that waits on a disk runs on an event loop: with the file I/O pool stalled (a disk
/// that takes seconds), requests that need no file are answered at once on other connections.
@Suite(.timeLimit(.minutes(3))) struct SlowDiskTests {
    /// A disk that stalls every file operation from `stall` to `release` (each at most 10 s,
    /// so nothing hangs).
    final class StalledDisk: Sendable {
        private let group = DispatchGroup()
        private let stalled = Mutex<(on: Bool, operations: Int)>((false, 0))

        /// The pool's hook: blocks the pool thread while stalled, as a slow disk would.
        func pass() {
            let wait = stalled.withLock { state -> Bool in
                if state.on { state.operations += 1 }
                return state.on
            }
            if wait { _ = group.wait(timeout: .now() + .seconds(10)) }
        }

        func stall() {
            group.enter()
            stalled.withLock { $0.on = true }
        }

        /// File operations that found the disk stalled.
        var stalledOperations: Int { stalled.withLock { $0.operations } }

        func release() {
            stalled.withLock { $0.on = false }
            group.leave()
        }
    }

    @Test func healthzAndAnAuthenticatedReadAreAnsweredWhileAnUploadsWritesStall() async throws {
        let disk = StalledDisk()
        // One daemon even in a balanced run: the hook stalls every daemon of the process, and a
        // balancer in front would buffer the body the test holds back.
        let harness = try ServiceHarness(alone: true, beforeEachFileJob: { disk.pass() })
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        disk.stall()

        // An upload whose disk work stalls: its head and the first megabyte are sent, the rest
        // waits in the client while the server holds back (its stream is full).
        let image = imageBytes(4 << 20)
        let uploader = try RawClient(port: harness.port, timeoutSeconds: 30)
        let panoramaId = newID()
        try uploader.send("PUT /v1/panoramas/\(panoramaId)?floorId=\(floorId) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.alpha)\r\n"
                          + "Content-Type: image/jpeg\r\nContent-Length: \(image.count)\r\n\r\n")
        try uploader.send(Array(image[0..<(1 << 20)]))
        try await waitUntil("the upload to reach the stalled disk") { disk.stalledOperations > 0 }

        // Meanwhile, on other connections: each answered within 50 ms, with the disk still stalled.
        // (A client that waits a second gives up: the test fails fast if they are held.)
        let health = try APIClient(port: harness.port, token: nil, timeoutSeconds: 1)
        let reader = try APIClient(port: harness.port, token: harness.alpha, timeoutSeconds: 1)
        var slowest = Duration.zero
        for _ in 0..<20 {
            let clock = ContinuousClock()
            let started = clock.now
            #expect(try health.send("GET", "/healthz").status == 200)
            let afterHealth = clock.now
            #expect(try reader.send("GET", "/v1/properties/\(propertyId)").status == 200)
            let afterRead = clock.now
            slowest = max(slowest, afterHealth - started, afterRead - afterHealth)
        }
        #expect(slowest < .milliseconds(50), "the slowest answer took \(slowest)")
        #expect(try await harness.service.context.read { try await $0.first("SELECT count(*) FROM panoramas")?[0].int } == 0) // still stalled

        // The disk comes back: the upload completes whole.
        disk.release()
        let rest = Array(image[(1 << 20)...])
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
        // One daemon even in a balanced run: the queue is a daemon's own.
        let harness = try ServiceHarness(alone: true, configure: { $0.previewQueueLimit = 1 }, beforeEachFileJob: { disk.pass() })
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let (first, second) = (newID(), newID())
        for id in [first, second] {
            #expect(try client.putPanorama(id, floorId: floorId, bytes: try JPEGFixture.panorama(width: 512), contentType: "image/jpeg").status == 201)
        }
        disk.stall()
        let waiting = try RawClient(port: harness.port, timeoutSeconds: 30)
        try waiting.send("GET /v1/panoramas/\(first)/preview HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.alpha)\r\n\r\n")
        // The first making is listed once it has started (its file work stalled).
        try await waitUntil("the first preview's making to wait on the disk") {
            (try? client.send("GET", "/metrics").text.contains("toursd_previews_waiting 1")) == true
        }
        let refused = try client.send("GET", "/v1/panoramas/\(second)/preview")
        #expect(refused.status == 503 && refused.errorCode == "unavailable" && refused.header("Retry-After") != nil, "\(refused.status)")
        disk.release()
        let made = try waiting.readResponse()
        #expect(made.status == 200 && JPEGFixture.dimensions(made.body) == [320, 160])
        await harness.finish()
    }
}
