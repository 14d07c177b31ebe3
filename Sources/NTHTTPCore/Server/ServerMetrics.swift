import Synchronization

/// The counters behind `GET /metrics`: requests by route and status, bytes in, active
/// connections, uploads in progress (request bodies being received), a request duration
/// histogram. Rendered in the Prometheus text format (version 0.0.4).
public final class ServerMetrics: Sendable {
    /// Upper bounds of the duration histogram, in seconds.
    static let bucketBounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Counts {
        var requests: [RequestKey: UInt64] = [:]
        var bucketCounts = [UInt64](repeating: 0, count: ServerMetrics.bucketBounds.count + 1)
        var durationSum: UInt64 = 0 // nanoseconds
        var durationCount: UInt64 = 0
        var bytesIn: UInt64 = 0
    }

    private struct RequestKey: Hashable {
        var route: Int
        var status: Int
    }

    private let counts = Mutex(Counts())
    private let active = Atomic<Int>(0)
    private let bodies = Atomic<Int>(0)

    public init() {}

    public var activeConnections: Int { active.load(ordering: .relaxed) }

    /// Request bodies being received right now: uploads in progress.
    public var bodiesInProgress: Int { bodies.load(ordering: .relaxed) }

    func bodyStarted() { bodies.wrappingAdd(1, ordering: .relaxed) }
    func bodyEnded() { bodies.wrappingSubtract(1, ordering: .relaxed) }

    func connectionOpened() { active.wrappingAdd(1, ordering: .relaxed) }
    func connectionClosed() { active.wrappingSubtract(1, ordering: .relaxed) }

    /// Counts one finished request. `route` is the router's index, or -1 for none.
    func record(route: Int, status: Int, bytesIn: Int64, nanoseconds: UInt64) {
        let seconds = Double(nanoseconds) / 1e9
        let bucket = Self.bucketBounds.firstIndex { seconds <= $0 } ?? Self.bucketBounds.count
        counts.withLock { counts in
            counts.requests[RequestKey(route: route, status: status), default: 0] += 1
            counts.bucketCounts[bucket] += 1
            counts.durationSum &+= nanoseconds
            counts.durationCount += 1
            counts.bytesIn &+= UInt64(max(0, bytesIn))
        }
    }

    /// The Prometheus text exposition; `routes` names the route indexes.
    public func render(routes: [Route]) -> String {
        let snapshot = counts.withLock { $0 }
        var out = ""
        out += "# HELP http_requests_total Requests answered, by route and status.\n"
        out += "# TYPE http_requests_total counter\n"
        for (key, value) in snapshot.requests.sorted(by: { ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status) }) {
            let label = key.route >= 0 && key.route < routes.count
                ? "\(routes[key.route].method.name) \(routes[key.route].pattern)" : "unmatched"
            out += "http_requests_total{route=\"\(escapeLabel(label))\",status=\"\(key.status)\"} \(value)\n"
        }
        out += "# HELP http_request_bytes_total Request body bytes received.\n"
        out += "# TYPE http_request_bytes_total counter\n"
        out += "http_request_bytes_total \(snapshot.bytesIn)\n"
        out += "# HELP http_active_connections Open client connections.\n"
        out += "# TYPE http_active_connections gauge\n"
        out += "http_active_connections \(activeConnections)\n"
        out += "# HELP http_uploads_in_progress Request bodies being received.\n"
        out += "# TYPE http_uploads_in_progress gauge\n"
        out += "http_uploads_in_progress \(bodiesInProgress)\n"
        out += "# HELP http_request_duration_seconds Time from a request's head to its response.\n"
        out += "# TYPE http_request_duration_seconds histogram\n"
        var cumulative: UInt64 = 0
        for (index, bound) in Self.bucketBounds.enumerated() {
            cumulative += snapshot.bucketCounts[index]
            out += "http_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        cumulative += snapshot.bucketCounts[Self.bucketBounds.count]
        out += "http_request_duration_seconds_bucket{le=\"+Inf\"} \(cumulative)\n"
        out += "http_request_duration_seconds_sum \(Double(snapshot.durationSum) / 1e9)\n"
        out += "http_request_duration_seconds_count \(snapshot.durationCount)\n"
        return out
    }

    private func escapeLabel(_ value: String) -> String {
        value.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"").replacingOccurrences("\n", "\\n")
    }
}

private extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
