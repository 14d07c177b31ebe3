import Foundation
import NTHTTPCore
import Testing
import TestSupport
import TestTraits
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTWebhooks

/// GET /healthz and GET /metrics as docs/api.md says, through the real server, with no token.
@Suite(.hangGuard, .testThreads) struct OpsRoutesTests {
    /// The health answers run on the event loop, where a flood of other requests never queues
    /// in front of them; /metrics, which renders every counter, runs where request work does
    /// (inline, 300 pipelining connections kept both loops rendering it, and a balancer's
    /// /healthz waited up to a second: bench/attack.sh).
    @Test func healthIsAnsweredOnTheLoopAndMetricsAmongRequestWork() {
        let router = Router { table in OpsRoutes.add(to: &table, metrics: ServerMetrics(), routes: { [] }) }
        let inline = { (path: String) -> Bool? in
            if case .found(let route, _) = router.match(.get, path) { return route.inline }
            return nil
        }
        #expect(inline("/healthz") == true)
        #expect(inline("/readyz") == true)
        #expect(inline("/metrics") == false)
    }

    /// The API's reads of one record run on the event loop where the database answers from
    /// memory there without waiting (SQLite), and nowhere else: on PostgreSQL every query
    /// waits on the network. Every other /v1 route runs among request work.
    @Test func readsOfOneRecordRunOnTheLoopOnlyWhereTheDatabaseReadsThere() async throws {
        let harness = try await ServiceHarness(alone: true)
        let onSQLite = harness.config.databaseUrl.isEmpty
        #expect(harness.service.records.readsOnEventLoops == onSQLite)
        let inline = harness.service.makeRouter(metrics: ServerMetrics()).routes
            .filter { $0.pattern.hasPrefix("/v1/") && $0.inline }.map { "\($0.method.name) \($0.pattern)" }.sorted()
        #expect(inline == (onSQLite ? ["GET /v1/panoramas/{panoramaId}", "GET /v1/properties/{propertyId}"] : []))
        // Answered there as anywhere (a revoked token: PropertyAPITests.tokensAreRequiredAndRevocable).
        let alpha = try harness.client(harness.alpha)
        let property = newID()
        #expect(try alpha.send("PUT", "/v1/properties/\(property)", json: ["name": "Loop", "floorCount": 1]).status == 201)
        #expect(try alpha.send("GET", "/v1/properties/\(property)").status == 200)
        #expect(try alpha.send("GET", "/v1/panoramas/\(newID())").status == 404)
        await harness.finish()
    }

    @Test func healthzAnswersOkWithoutAToken() async throws {
        let harness = try await ServiceHarness()
        let response = try harness.client(nil).send("GET", "/healthz")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.text == #"{"status":"ok"}"#)
        await harness.finish()
    }

    /// In a balanced run (TOURSD_TEST_BALANCED=N on PostgreSQL) each harness is N daemons
    /// behind nginx, and the requests of one client reach every one of them.
    @Test func requestsReachEveryDaemonOfTheHarness() async throws {
        let harness = try await ServiceHarness()
        let environment = ProcessInfo.processInfo.environment
        let daemons = harness.config.databaseUrl.isEmpty ? 1 : Int(environment["TOURSD_TEST_BALANCED"] ?? "") ?? 1
        #expect(harness.daemonPorts.count == daemons)
        let client = try harness.client(harness.alpha)
        for _ in 0..<(4 * daemons) { #expect(try client.send("GET", "/v1/properties").status == 200) }
        let served = try harness.daemonPorts.map { port in
            try APIClient(port: port, token: nil).send("GET", "/metrics").text.split(separator: "\n")
                .filter { $0.hasPrefix(#"http_requests_total{route="GET /v1/properties",status="200"}"#) }
                .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        }
        #expect(served.reduce(0, +) == 4 * daemons)
        #expect(served.allSatisfy { $0 > 0 }, "requests per daemon: \(served)")
        await harness.finish()
    }

    @Test func metricsCountRequestsByRouteAndStatusInPrometheusFormat() async throws {
        let harness = try await ServiceHarness(alone: true) // one daemon's counters
        let client = try harness.client(nil)
        try client.send("GET", "/healthz")
        try client.send("GET", "/healthz")
        try client.send("GET", "/missing")
        try client.send("GET", "/v1/properties") // 401: no token
        let response = try client.send("GET", "/metrics")
        #expect(response.status == 200)
        #expect(response.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let lines = response.text.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"http_requests_total{route="GET /healthz",status="200"} 2"#))
        #expect(lines.contains(#"http_requests_total{route="unmatched",status="404"} 1"#))
        #expect(lines.contains(#"http_requests_total{route="GET /v1/properties",status="401"} 1"#))
        #expect(lines.contains("http_active_connections 1"))
        #expect(lines.contains("http_uploads_in_progress 0"))
        #expect(lines.contains { $0.hasPrefix("http_request_bytes_total ") })
        #expect(lines.contains(#"http_request_duration_seconds_count 4"#))
        #expect(lines.contains { $0.hasPrefix(#"http_request_duration_seconds_bucket{le="+Inf"} 4"#) })
        for line in lines where !line.hasPrefix("#") {
            #expect(Double(line.split(separator: " ").last ?? "") != nil, "\(line)")
        }
        // Every thread by its group (the test process's other daemons count too: at least this one's).
        let threads = { (group: String) in lines.first { $0.hasPrefix("toursd_threads{group=\"\(group)\"} ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0 }
        #expect(threads("file-io") >= harness.config.ioThreads)
        #expect(threads("epoll-loop") >= 1)
        #expect(lines.contains { $0.hasPrefix(#"toursd_thread_jobs_waiting{group="file-io"} "#) })
        // On PostgreSQL, its round trips; a read made since counts one more at least.
        let trips = { (lines: [String]) in lines.first { $0.hasPrefix("toursd_database_round_trips_total ") }.flatMap { Int($0.split(separator: " ")[1]) } }
        if harness.config.databaseUrl.isEmpty {
            #expect(trips(lines) == nil)
        } else {
            let before = try #require(trips(lines))
            #expect(try harness.client(harness.alpha).send("GET", "/v1/properties").status == 200)
            let after = try #require(trips(try client.send("GET", "/metrics").text.split(separator: "\n").map(String.init)))
            #expect(after > before)
        }
        await harness.finish()
    }
}
