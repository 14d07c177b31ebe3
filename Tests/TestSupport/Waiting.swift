/// A bounded wait ran out.
public struct TimedOut: Error, CustomStringConvertible {
    public let description: String
}

/// Polls a condition that another thread or task makes true: 200 polls of 50 ms at most (10 s),
/// then throws `TimedOut`, which fails the test. For state that no signal announces (a
/// server's gauges, files a sweep removes); where a signal exists, tests await it instead.
public func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
    for _ in 0..<200 {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw TimedOut(description: "timed out waiting for \(what)")
}
