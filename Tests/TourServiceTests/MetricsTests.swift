import Foundation
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

/// What /metrics tells an on-call person (docs/api.md "Service"): the bucket's and the
/// database's calls by operation, outcome and latency; and its own token when one is set.
@Suite(.hangGuard, .testThreads) struct MetricsTests {
    @Test func theBucketsAndTheDatabasesCallsAreCountedByOperationAndOutcome() async throws {
        let server = try S3Server(.rclone)
        let harness = try await BucketStoreTests.harness(on: server)
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID()
        let image = imageBytes(300_000)
        #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201)
        // The body sent became the local copy reads are served from: with it gone, a part of
        // the panorama is asked of the bucket.
        try FileManager.default.removeItem(atPath: harness.dataDir + "/copies/" + sha256Hex(image))
        #expect(try client.send("GET", "/v1/panoramas/\(id)/content", headers: ["Range": "bytes=0-99"]).status == 206)
        #expect(try harness.metric(#"toursd_bucket_requests_total{operation="put",outcome="ok"}"#) ?? 0 >= 1)
        #expect(try harness.metric(#"toursd_bucket_requests_total{operation="get",outcome="ok"}"#) ?? 0 >= 1)
        let puts = try #require(try harness.metric(#"toursd_bucket_requests_seconds_count{operation="put"}"#))
        #expect(try harness.metric(#"toursd_bucket_requests_seconds_bucket{operation="put",le="+Inf"}"#) == puts)
        #expect(try harness.metric(#"toursd_database_calls_total{operation="write",outcome="ok"}"#) ?? 0 >= 2)
        #expect(try harness.metric(#"toursd_database_calls_seconds_count{operation="statement"}"#) ?? 0 >= 1)
        // The store away: its calls counted as such.
        server.stop()
        #expect(try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(1000)).status == 503)
        let unavailable = try harness.daemonClient(nil).send("GET", "/metrics").text.split(separator: "\n")
            .filter { $0.hasPrefix("toursd_bucket_requests_total{") && $0.contains(#"outcome="unavailable""#) }
        #expect(!unavailable.isEmpty && unavailable.allSatisfy { !$0.hasSuffix(" 0") }, "\(unavailable)")
        await harness.finish()
    }

    @Test func metricsAsksForItsTokenWhenOneIsSet() async throws {
        let file = testDirectory("metrics-token").path
        try "a-metrics-token-of-some-length\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let harness = try await ServiceHarness { $0.metricsTokenFile = file }
        let visitor = try harness.daemonClient(nil)
        let refused = try visitor.send("GET", "/metrics")
        #expect(refused.status == 401 && refused.errorCode == "unauthorized" && refused.header("WWW-Authenticate") != nil)
        // Neither a wrong token nor a tenant's opens it.
        #expect(try visitor.send("GET", "/metrics", headers: ["Authorization": "Bearer a-metrics-token-of-some-lengthX"]).status == 401)
        #expect(try harness.daemonClient(harness.alpha).send("GET", "/metrics").status == 401)
        let metrics = try visitor.send("GET", "/metrics", headers: ["Authorization": "Bearer a-metrics-token-of-some-length"])
        #expect(metrics.status == 200 && metrics.text.contains("toursd_threads"))
        // Health stays open to a balancer.
        #expect(try visitor.send("GET", "/readyz").status == 200)
        await harness.finish()

        // A token too short to guess is refused at start.
        try "short".write(toFile: file, atomically: true, encoding: .utf8)
        await #expect(throws: StartupError.self) { try await ServiceHarness { $0.metricsTokenFile = file } }
    }
}
