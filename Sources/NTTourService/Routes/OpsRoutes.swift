import NTHashing
import NTHTTPCore
import NTLogging
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTThreadPools
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// `GET /healthz`, `GET /readyz` and `GET /metrics` (docs/api.md "Service"): no token needed.
/// The health answers only read two flags and copy bytes, so they run inline on their
/// connection's event loop, ahead of any request work: a flood of other requests queues on
/// the handler threads, never in front of them. `/metrics` renders every counter, which is
/// request work like any other: it runs on a handler thread.
enum OpsRoutes {
    /// The health answer never changes, so it is encoded once.
    private static let healthBody: [UInt8] = Array(#"{"status":"ok"}"#.utf8)
    private static let readyBody: [UInt8] = Array(#"{"status":"ready"}"#.utf8)
    private static let drainingBody: [UInt8] = Array(#"{"reason":"the daemon is stopping","status":"draining"}"#.utf8)

    /// `unavailable`: why the database or the blob store cannot be reached, as they last saw
    /// (read without I/O). `draining`: whether the daemon is stopping (it still answers what
    /// it is sent, and a balancer should send no more).
    /// `serviceMetrics`: the service's own lines of /metrics, after the HTTP layer's;
    /// `metricsToken`: the bearer token /metrics asks for (nil: none).
    ///
    /// `/healthz` is liveness: 200 while the process serves, saying `degraded` with the reason
    /// when storage cannot be reached (restarting the daemon would not help). `/readyz` is
    /// readiness, for a balancer's checks: 200 only while requests can be served, else 503 with
    /// the reason (storage unavailable, or draining at shutdown).
    static func add(to table: inout RouteTable, metrics: ServerMetrics, routes: @escaping @Sendable () -> [Route],
                    unavailable: @escaping @Sendable () -> String? = { nil }, draining: @escaping @Sendable () -> Bool = { false },
                    metricsToken: [UInt8]? = nil, serviceMetrics: @escaping @Sendable () -> String = { "" }) {
        table.add(.get, "/healthz", inline: true) { _ in
            guard let reason = unavailable() else { return .json(.ok, healthBody) }
            return .json(.ok, unready(reason, status: "degraded"))
        }
        table.add(.get, "/readyz", inline: true) { _ in
            if draining() { return .json(.serviceUnavailable, drainingBody) }
            guard let reason = unavailable() else { return .json(.ok, readyBody) }
            return .json(.serviceUnavailable, unready(reason, status: "unavailable"))
        }
        table.add(.get, "/metrics") { request in
            if let metricsToken {
                let given = request.headers["authorization"].flatMap(BearerToken.parse).map { Array($0.utf8) } ?? []
                guard constantTimeEquals(given, metricsToken) else { throw ServiceError(.unauthorized, "/metrics asks for its own token (metricsTokenFile)") }
            }
            return Response(status: .ok, contentType: "text/plain; version=0.0.4; charset=utf-8",
                     body: .bytes(Array((metrics.render(routes: routes()) + serviceMetrics() + threadMetrics).utf8)))
        }
    }

    private static func unready(_ reason: String, status: String) -> [UInt8] {
        var body: [UInt8] = Array(#"{"reason":"#.utf8)
        body.append(jsonString: reason)
        body.append(contentsOf: Array(#","status":""#.utf8) + Array(status.utf8) + Array(#""}"#.utf8))
        return body
    }

    /// The process's threads by group (each pool, the epoll loop) and the jobs waiting for them.
    static var threadMetrics: String {
        let groups = ThreadCensus.groups
        var out = "# HELP toursd_threads Threads running, by group (a pool of the daemon, the epoll loop).\n"
        out += "# TYPE toursd_threads gauge\n"
        for group in groups { out += "toursd_threads{group=\"\(group.name)\"} \(group.threads)\n" }
        out += "# HELP toursd_thread_jobs_waiting Jobs queued for a group's threads, not started yet.\n"
        out += "# TYPE toursd_thread_jobs_waiting gauge\n"
        for group in groups { out += "toursd_thread_jobs_waiting{group=\"\(group.name)\"} \(group.waitingJobs)\n" }
        return out
    }
}
