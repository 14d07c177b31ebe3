import Testing
import TestSupport
import TestTraits
@testable import NTServiceModel

/// The signalled waits with a time limit (the feed's long-poll, the draft HEAD's grace). Each
/// wait is a task group of two tasks: beside the whole suite's load on two cores these need
/// Swift's few cooperative threads (a CI run once took over a minute for 200 of them).
@Suite(.hangGuard, .testThreads) struct WaitersTests {
    /// A signal after the mark (a commit while the feed read) ends the wait at once: no waiting
    /// out the time for what has already come (ten minutes, past the suite's time limit).
    @Test func aSignalSinceTheMarkEndsTheWaitAtOnce() async {
        let waiters = Waiters()
        let mark = waiters.mark()
        waiters.signal()
        await waiters.awaitSignal(since: mark, upTo: 600_000)
        #expect(waiters.isEmpty)
    }

    @Test func aWaitEndsAtTheNextSignalOrAtItsTime() async throws {
        let waiters = Waiters()
        let began = ContinuousClock.now
        await waiters.awaitSignal(since: waiters.mark(), upTo: 50)
        #expect(ContinuousClock.now - began >= .milliseconds(50))

        let waiting = Task { await waiters.awaitSignal(since: waiters.mark(), upTo: 600_000) }
        try await waitUntil("the wait to be registered") { !waiters.isEmpty }
        waiters.signal()
        await waiting.value
        #expect(waiters.isEmpty)
    }

    /// A time that runs out as a signal ends the wait (here: no time at all, the signal already
    /// there) leaves no mark behind once the wait has returned.
    @Test func timesRunningOutBesideSignalsLeaveNothingBehind() async {
        let waiters = Waiters()
        for _ in 0..<20 {
            let mark = waiters.mark()
            waiters.signal()
            await waiters.awaitSignal(since: mark, upTo: 0)
        }
        #expect(waiters.expiredCount == 0)
        #expect(waiters.isEmpty)
    }
}
