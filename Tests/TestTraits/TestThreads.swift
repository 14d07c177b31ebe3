import Foundation
import Testing

/// Runs each test of a suite on threads of the tests' own, not on Swift's cooperative pool.
/// The tests' clients block (a socket read waits for the server's answer); on a 2-core machine
/// the cooperative pool has two threads, so two blocked tests held every other test's next
/// step, and a test that awaited anything came back only after them: queueing, not work. Here a
/// blocking call holds one of `TestExecutor.width` threads, and whatever a test starts (its
/// task group's children, its continuations) runs there too.
public struct TestThreads: TestTrait, SuiteTrait, TestScoping {
    private static let executor = TestExecutor()

    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(Self.executor) { try await function() }
    }
}

extension Trait where Self == TestThreads {
    /// The suite's tests run on the tests' own threads (`TestThreads`).
    public static var testThreads: Self { TestThreads() }
}

/// Threads that take jobs from one queue: a task executor where a job may block its thread.
/// (Not the service's `ThreadPool`, which refuses a blocking wait on its threads, as it must in
/// toursd; a test blocks on purpose, the way a client does.)
final class TestExecutor: TaskExecutor, @unchecked Sendable {
    /// Past the tests a pass runs at once on this machine; idle threads wait on the condition.
    static let width = 48
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    init() {
        for index in 0..<Self.width {
            let thread = Thread { [self] in serve() }
            thread.name = "tests-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    private func serve() {
        while true {
            let job = condition.withLock {
                while jobs.isEmpty { condition.wait() }
                return jobs.removeFirst()
            }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
