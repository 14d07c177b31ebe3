#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
import NTThreadPools

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

    /// A job that finds its lane idle runs where its caller is when that is a pool thread (a
    /// request handler's: no hop there and back); from a thread that must not block it goes
    /// to the lane's pool, as `run`; mixed with jobs run in turn, none overlaps another.
    @Test func aJobFindingItsLaneIdleRunsInPlaceOnAPoolThread() async throws {
        let handlers = ThreadPool(name: "handlers", threads: 2), io = ThreadPool(name: "io", threads: 2)
        let lane = SerialLane(pool: io)
        #expect(try await Task(executorPreference: handlers) { try await lane.runHereWhenIdle { handlers.indexOfCurrentThread != nil } }.value)
        #expect(try await Task.detached { try await lane.runHereWhenIdle { io.indexOfCurrentThread != nil } }.value)

        let log = Overlap()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask(executorPreference: handlers) {
                    if index % 2 == 0 {
                        try await lane.runHereWhenIdle { log.enter(); log.leave() }
                    } else {
                        lane.submit { log.enter(); log.leave() }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await lane.run {} // after every job submitted
        #expect(log.most == 1)
        #expect(log.total == 100)
        handlers.stop()
        io.stop()
    }

    @Test func aStoppedPoolRefusesWorkInsteadOfLeavingItWaiting() async throws {
        let pool = ThreadPool(name: "test", threads: 1)
        pool.stop()
        await #expect(throws: PoolStopped.self) { try await pool.run { 1 } }
        await #expect(throws: PoolStopped.self) { try await SerialLane(pool: pool).run { 1 } }
    }

    /// A task given to a stopped pool still runs, and never in place: its creator may hold a
    /// lock the task takes (a preview's making, created under its table's lock, crashed the
    /// process with "Recursive call to lock Mutex" once the daemon's file pool had stopped).
    @Test func aTaskGivenToAStoppedPoolRunsElsewhereThanItsCreator() async throws {
        final class Table: Sendable { let entries = Mutex<Int>(0) }
        let pool = ThreadPool(name: "test", threads: 1), table = Table()
        pool.stop()
        let task = table.entries.withLock { entries in
            entries = 1
            return Task(executorPreference: pool) { table.entries.withLock { $0 += 1 } }
        }
        await task.value
        #expect(table.entries.withLock { $0 } == 2)
    }

    /// Start-up's and the tools' work runs as the calling task on a thread made for it, not on
    /// the caller's (a cooperative one here), gives back what it returned or threw, and its
    /// thread ends with it.
    @Test func workOnAThreadOfItsOwnRunsThereAndItsThreadEnds() async throws {
        struct Refused: Error, Equatable {}
        let name = "own-\(UUID().uuidString.prefix(8))"
        func threads() -> Int { ThreadCensus.groups.first { $0.name == name }?.threads ?? 0 }
        #expect(!ThreadPool.isCurrentThreadAPoolThread)
        let (onAPoolThread, counted) = await ThreadPool.onThreadOfItsOwn(named: name) {
            (ThreadPool.isCurrentThreadAPoolThread, threads())
        }
        #expect(onAPoolThread && counted == 1)
        let error = await #expect(throws: Refused.self) {
            try await ThreadPool.onThreadOfItsOwn(named: name) { () async throws(Refused) in throw Refused() }
        }
        #expect(error == Refused())
        try await waitUntil("its threads ended") { threads() == 0 }
    }

    /// A thread with I/O: a job for that thread runs there; a task it resumes stays there (no
    /// hand-over); its descriptor wakes it when it has no job, and so does its deadline; at stop
    /// it is told, after the jobs queued before.
    @Test func aThreadWithIOPollsItsDescriptorAndKeepsWhatItResumes() async throws {
        let watchers = (0..<2).map { _ in PipeWatcher() }
        let pool = ThreadPool(name: "test-io", threads: 2, io: { watchers[$0] })
        defer { pool.stop() }
        for thread in 0..<2 {
            let ran = await withCheckedContinuation { continuation in
                #expect(pool.submit(to: thread) { continuation.resume(returning: $0) })
            }
            #expect(ran == thread)
        }
        // Resumed by thread 1's I/O (a byte on its pipe), the task goes on on thread 1.
        let (resumed, ended) = await withTaskExecutorPreference(pool) {
            let awaitingOn = pool.indexOfCurrentThread, sleptBefore = watchers[0].sleeps
            let resumedOn = await withCheckedContinuation { continuation in
                pool.submit(to: 1) { _ in
                    // A task awaiting on thread 0 must have suspended (thread 0 went to sleep)
                    // before the resumption, or it simply goes on where it was.
                    if awaitingOn == 0 { #expect(watchers[0].slept(after: sleptBefore, within: .seconds(10))) }
                    watchers[1].whenReadable { continuation.resume(returning: pool.indexOfCurrentThread) }
                    watchers[1].poke()
                }
            }
            return (resumedOn, pool.indexOfCurrentThread)
        }
        #expect(resumed == 1 && ended == 1)
        // With nothing to do and nothing on the pipe, the deadline wakes it.
        let asked = ContinuousClock.now
        let woken = await withCheckedContinuation { continuation in
            pool.submit(to: 0) { _ in watchers[0].at(asked + .milliseconds(50)) { continuation.resume(returning: ContinuousClock.now) } }
        }
        #expect(woken >= asked + .milliseconds(50))
        let last = DispatchSemaphore(value: 0)
        pool.submit(to: 0) { _ in last.signal() }
        pool.stop()
        #expect(last.wait(timeout: .now() + 10) == .success)
        #expect(watchers[0].stoppedAfterTheLastJob(within: .seconds(10)))
    }
}

/// A pipe a pool thread watches: what to do when a byte comes, or at a deadline; whether it
/// was told of the stop. Touched on its thread, but for `poke` and the stop's check.
private final class PipeWatcher: ThreadIO, @unchecked Sendable {
    private let ends: (read: Int32, write: Int32)
    private var readable: (@Sendable () -> Void)?
    private var deadline: (ContinuousClock.Instant, @Sendable () -> Void)?
    private let stop = DispatchSemaphore(value: 0)
    private let sleepsSeen = NSCondition()
    private var sleepCount = 0

    init() {
        var pair: [Int32] = [0, 0]
        precondition(pipe(&pair) == 0)
        ends = (pair[0], pair[1])
    }

    deinit {
        close(ends.read)
        close(ends.write)
    }

    /// On the watcher's thread: `action` runs when a byte comes.
    func whenReadable(_ action: @escaping @Sendable () -> Void) { readable = action }
    /// On the watcher's thread: `action` runs at `instant`.
    func at(_ instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) { deadline = (instant, action) }

    func poke() {
        var byte: UInt8 = 1
        _ = write(ends.write, &byte, 1)
    }

    func stoppedAfterTheLastJob(within limit: Duration) -> Bool {
        stop.wait(timeout: .now() + .milliseconds(Int(limit.components.seconds * 1000))) == .success
    }

    func turn() {
        if let (at, action) = deadline, at <= .now {
            deadline = nil
            action()
        }
    }

    /// How many times the watcher's thread has gone to sleep.
    var sleeps: Int { sleepsSeen.withLock { sleepCount } }

    /// Waits until the thread has gone to sleep more than `count` times.
    func slept(after count: Int, within limit: Duration) -> Bool {
        let deadline = Date() + Double(limit.components.seconds)
        return sleepsSeen.withLock {
            while sleepCount <= count {
                guard sleepsSeen.wait(until: deadline) else { return false }
            }
            return true
        }
    }

    func descriptors(_ polled: inout [pollfd]) -> ContinuousClock.Instant? {
        sleepsSeen.withLock {
            sleepCount += 1
            sleepsSeen.broadcast()
        }
        polled.append(pollfd(fd: ends.read, events: Int16(POLLIN), revents: 0))
        return deadline?.0
    }

    func polled(_ polled: ArraySlice<pollfd>) {
        guard polled[polled.startIndex].revents != 0 else { return }
        var byte: UInt8 = 0
        _ = read(ends.read, &byte, 1)
        readable?()
        readable = nil
    }

    func stopped() { stop.signal() }
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
