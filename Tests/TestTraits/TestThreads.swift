import NTThreadPools
import Testing

/// Runs each test of a suite on threads of the tests' own, not on Swift's cooperative pool.
/// The tests' clients block (a socket read waits for the server's answer); on a 2-core machine
/// the cooperative pool has two threads, so two blocked tests held every other test's next
/// step, and a test that awaited anything came back only after them: queueing, not work. Here a
/// blocking call holds one of `width` threads, and whatever a test starts (its task group's
/// children, its continuations) runs there too.
public struct TestThreads: TestTrait, SuiteTrait, TestScoping {
    /// Past the tests a pass runs at once on this machine; idle threads sleep in poll.
    static let width = 48
    private static let pool = ThreadPool(name: "tests", threads: width)

    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(Self.pool) { try await function() }
    }
}

extension Trait where Self == TestThreads {
    /// The suite's tests run on the tests' own threads (`TestThreads`).
    public static var testThreads: Self { TestThreads() }
}
