import Synchronization

/// Calls to one dependency (the bucket, the database, webhook endpoints) by operation: how
/// many ended in each outcome, and how long they took, as a Prometheus counter and histogram
/// (`render`). Recording takes one short lock; nothing is allocated once an operation's
/// series exists.
public final class OperationMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds: a loopback round trip to a slow upload.
    public static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    private struct Series {
        var outcomes: [String: Int] = [:]
        var buckets = [Int](repeating: 0, count: OperationMetrics.bounds.count)
        var count = 0
        var sum = 0.0

        /// Buckets are cumulative, as Prometheus reads them: each counts the calls at or under
        /// its bound.
        mutating func add(outcome: String, seconds: Double) {
            outcomes[outcome, default: 0] += 1
            for (index, bound) in OperationMetrics.bounds.enumerated() where seconds <= bound { buckets[index] += 1 }
            count += 1
            sum += seconds
        }
    }

    /// `name`: the metrics' prefix (`toursd_bucket_requests`); `what`: what is counted, for
    /// their help lines ("requests to the bucket").
    public let name: String
    public let what: String
    private let series = Mutex<[String: Series]>([:])

    public init(name: String, what: String) {
        self.name = name
        self.what = what
    }

    /// One call of `operation` that took `seconds` and ended in `outcome` ("ok", "error", ...).
    public func record(_ operation: String, outcome: String, seconds: Double) {
        series.withLock { all in
            all[operation, default: Series()].add(outcome: outcome, seconds: seconds)
        }
    }

    /// `body`, timed and recorded as `operation`: "ok" when it returns, else what `failure`
    /// calls the error it threw.
    public func measure<T>(_ operation: String, failure: (any Error) -> String = { _ in "error" }, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        do {
            let value = try await body()
            record(operation, outcome: "ok", seconds: Self.seconds(since: start))
            return value
        } catch {
            record(operation, outcome: failure(error), seconds: Self.seconds(since: start))
            throw error
        }
    }

    public static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The lines of /metrics: `<name>_total{operation,outcome}` and the histogram
    /// `<name>_seconds{operation}`, operations in name order.
    public func render() -> String {
        let all = series.withLock { $0 }.sorted { $0.key < $1.key }
        var out = "# HELP \(name)_total \(what.prefix(1).uppercased() + what.dropFirst()), by operation and outcome.\n"
        out += "# TYPE \(name)_total counter\n"
        for (operation, series) in all {
            for (outcome, count) in series.outcomes.sorted(by: { $0.key < $1.key }) {
                out += "\(name)_total{operation=\"\(operation)\",outcome=\"\(outcome)\"} \(count)\n"
            }
        }
        out += "# HELP \(name)_seconds How long \(what) took, by operation.\n"
        out += "# TYPE \(name)_seconds histogram\n"
        for (operation, series) in all {
            for (bound, count) in zip(Self.bounds, series.buckets) {
                out += "\(name)_seconds_bucket{operation=\"\(operation)\",le=\"\(bound)\"} \(count)\n"
            }
            out += "\(name)_seconds_bucket{operation=\"\(operation)\",le=\"+Inf\"} \(series.count)\n"
            out += "\(name)_seconds_sum{operation=\"\(operation)\"} \(series.sum)\n"
            out += "\(name)_seconds_count{operation=\"\(operation)\"} \(series.count)\n"
        }
        return out
    }
}
