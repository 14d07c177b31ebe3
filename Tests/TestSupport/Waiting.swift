/// A bounded wait ran out.
public struct TimedOut: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

/// Polls a condition that another thread or task makes true: every 50 ms for `seconds` at most
/// (10 by default), then throws `TimedOut`, which fails the test. For state that no signal
/// announces (a server's gauges, files a sweep removes); where a signal exists, tests await it
/// instead.
public func waitUntil(_ what: String, seconds: Int = 10, _ condition: () async throws -> Bool) async throws {
    for _ in 0..<(seconds * 20) {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw TimedOut(description: "timed out waiting for \(what)")
}
