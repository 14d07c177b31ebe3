#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import Testing
import TestSupport
import ThreadPools

@Suite struct ThreadPoolTests {
    @Test func runReturnsTheResultAndThrowsTheError() async throws {
        let pool = ThreadPool(name: "test", threads: 2)
        #expect(try await pool.run { 6 * 7 } == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await pool.run { () throws -> Int in throw Failure() } }
        pool.stop()
    }

    /// Regression: a taken job stayed in the queue's storage until the queue drained, keeping
    /// what it captured (an upload's write batch) alive for as long as the pool was busy.
    @Test func aFinishedJobLetsGoOfWhatItCapturedWhileThePoolStaysBusy() async throws {
        final class Payload: Sendable {}
        let pool = ThreadPool(name: "test", threads: 1)
        let first = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0), last = DispatchSemaphore(value: 0)
        weak var released: Payload?
        pool.submit { _ in _ = first.wait(timeout: .now() + 10) }
        do {
            let payload = Payload()
            released = payload
            pool.submit { _ in _ = payload }
        }
        // A job that holds the thread while another waits behind it: the queue never drains.
        pool.submit { _ in
            holding.signal()
            _ = last.wait(timeout: .now() + 10)
        }
        pool.submit { _ in }
        first.signal()
        #expect(holding.wait(timeout: .now() + 10) == .success)
        #expect(released == nil) // the payload's job ran; nothing keeps it
        last.signal()
        pool.stop()
    }

    @Test func jobsOfALaneNeverOverlap() async throws {
        let pool = ThreadPool(name: "test", threads: 4)
        let lane = SerialLane(pool: pool)
        let log = Overlap()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask { try await lane.run { log.enter(); log.leave() } }
            }
            try await group.waitForAll()
        }
        #expect(log.most == 1)
        #expect(log.total == 50)
        pool.stop()
    }

    @Test func aStoppedPoolRefusesWorkInsteadOfLeavingItWaiting() async throws {
        let pool = ThreadPool(name: "test", threads: 1)
        pool.stop()
        await #expect(throws: PoolStopped.self) { try await pool.run { 1 } }
        await #expect(throws: PoolStopped.self) { try await SerialLane(pool: pool).run { 1 } }
    }

    @Test func blockingCallersGetTheResult() throws {
        let pool = ThreadPool(name: "test", threads: 2)
        #expect(try pool.runAndWait { thread in thread < 2 })
        pool.stop()
    }
}

/// How many callers were inside at once, at most, and how many came in all.
private final class Overlap: Sendable {
    private let counts = Mutex<(now: Int, most: Int, total: Int)>((0, 0, 0))

    func enter() {
        counts.withLock { counts in
            counts.now += 1
            counts.total += 1
            counts.most = max(counts.most, counts.now)
        }
        usleep(200) // a while inside, so an overlap would show
    }

    func leave() { counts.withLock { $0.now -= 1 } }
    var most: Int { counts.withLock { $0.most } }
    var total: Int { counts.withLock { $0.total } }
}
