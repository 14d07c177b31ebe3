#if canImport(Glibc)
import Glibc
#endif
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import HTTPCore
import Logging
@testable import TourService

/// GET /healthz and GET /metrics as API.md says, through the real server.
@Suite struct OpsRoutesTests {
    private func get(_ port: UInt16, _ path: String) async throws -> (status: Int, type: String?, body: String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, http.value(forHTTPHeaderField: "Content-Type"), String(decoding: data, as: UTF8.self))
    }

    private func withServer(_ body: (UInt16) async throws -> Void) async throws {
        var config = ToursdConfig()
        config.port = 0
        let metrics = ServerMetrics()
        let server = HTTPServer(configuration: config.server, router: SyncService.makeRouter(config: config, metrics: metrics),
                                metrics: metrics, logger: Logger(sink: LogSink(fd: open("/dev/null", O_WRONLY)), level: .error))
        let port = try server.start().port
        try await body(port)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in server.shutdown { done.resume() } }
    }

    @Test func healthzAnswersOk() async throws {
        try await withServer { port in
            let response = try await get(port, "/healthz")
            #expect(response.status == 200)
            #expect(response.type == "application/json")
            #expect(response.body == #"{"status":"ok"}"#)
        }
    }

    @Test func metricsCountRequestsByRouteAndStatusInPrometheusFormat() async throws {
        try await withServer { port in
            _ = try await get(port, "/healthz")
            _ = try await get(port, "/healthz")
            _ = try await get(port, "/missing")
            let response = try await get(port, "/metrics")
            #expect(response.status == 200)
            #expect(response.type?.hasPrefix("text/plain; version=0.0.4") == true)
            let lines = response.body.split(separator: "\n").map(String.init)
            #expect(lines.contains(#"http_requests_total{route="GET /healthz",status="200"} 2"#))
            #expect(lines.contains(#"http_requests_total{route="unmatched",status="404"} 1"#))
            #expect(lines.contains { $0.hasPrefix("http_active_connections ") })
            #expect(lines.contains { $0.hasPrefix("http_request_bytes_total ") })
            #expect(lines.contains(#"http_request_duration_seconds_count 3"#))
            #expect(lines.contains { $0.hasPrefix(#"http_request_duration_seconds_bucket{le="+Inf"} 3"#) })
            // Every sample line is "name{labels} value" or "name value" with a numeric value.
            for line in lines where !line.hasPrefix("#") {
                #expect(Double(line.split(separator: " ").last ?? "") != nil, "\(line)")
            }
        }
    }
}
