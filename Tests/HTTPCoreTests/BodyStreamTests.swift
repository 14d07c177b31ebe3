import Dispatch
import Synchronization
import Testing
import NTThreadPools
import TestSupport
@testable import NTHTTPCore

/// The stream between a connection and its handler, without sockets.
@Suite struct BodyStreamTests {
    /// Counts the connection's wake-ups.
    final class Demands: Sendable {
        private let count = Atomic<Int>(0)
        func signal() { count.wrappingAdd(1, ordering: .sequentiallyConsistent) }
        var value: Int { count.load(ordering: .sequentiallyConsistent) }
    }

    private func stream(budget: BodyBudget = BodyBudget(limit: 1 << 20), _ demands: Demands = Demands()) -> BodyStream {
        BodyStream(budget: budget, buffers: BodyBufferPool(bufferSize: 8, budget: 64)) { demands.signal() }
    }

    private func append(_ stream: BodyStream, _ text: String, high: Int = 1 << 20) -> Bool {
        Array(text.utf8).withUnsafeBytes { stream.append($0, highWatermark: high) }
    }

    private func text(_ chunk: BodyChunk?) -> String? {
        chunk.map { String(decoding: $0.bytes, as: UTF8.self) }
    }

    @Test func theFirstAskForTheBodyTellsTheConnection() async throws {
        let demands = Demands()
        let stream = stream(demands)
        #expect(append(stream, "ab"))
        #expect(demands.value == 0) // nothing asked yet: no 100 Continue
        #expect(text(try await stream.next()) == "ab")
        #expect(demands.value == 1)
        stream.finish()
        #expect(try await stream.next() == nil)
        #expect(stream.received == 2)
    }

    /// A body that came whole with its head leaves the connection nothing to do when the
    /// handler asks for it: no wake-up of its loop.
    @Test func askingForABodyAlreadyWholeTellsTheConnectionNothing() async throws {
        let demands = Demands()
        let stream = stream(demands)
        #expect(append(stream, "ab"))
        stream.finish()
        #expect(text(try await stream.next()) == "ab")
        #expect(try await stream.next() == nil)
        #expect(demands.value == 0)
    }

    @Test func piecesAreCopiedIntoPooledBuffersOfOneSize() async throws {
        let stream = stream()
        #expect(append(stream, "abc"))
        #expect(append(stream, "defghijkl")) // fills the first 8-byte buffer, then a second
        stream.finish()
        #expect(text(try await stream.next()) == "abcdefgh")
        #expect(text(try await stream.next()) == "ijkl")
        #expect(try await stream.next() == nil)
    }

    @Test func aboveTheHighWatermarkTheConnectionStopsAndBelowTheLowItResumes() async throws {
        let demands = Demands()
        let stream = stream(demands)
        #expect(append(stream, "12345678", high: 20))
        #expect(append(stream, "abcdefgh", high: 20))
        #expect(!append(stream, "ABCDEFGH", high: 20)) // 24 buffered: stop reading
        #expect(text(try await stream.next()) == "12345678") // 16 left, above the low watermark of 10
        #expect(demands.value == 1) // only the first ask
        #expect(text(try await stream.next()) == "abcdefgh") // 8 left: read again
        #expect(demands.value == 2)
    }

    @Test func aDrainGetsABatchWhenTheStreamIsFullAndWhenTheBodyEnds() async throws {
        let stream = stream()
        let pool = ThreadPool(name: "test", threads: 1)
        let batches = Batches()
        let draining = Task { try await stream.drain(on: pool, { batches.add($0, last: $1) }, then: { batches.texts }) }
        try await waitUntil("the drain to start") { stream.isDraining }
        #expect(append(stream, "12", high: 6))
        #expect(append(stream, "3456", high: 6)) // full: the batch goes, and reading goes on
        #expect(append(stream, "78", high: 6))
        stream.finish()
        #expect(try await draining.value == ["123456", "78"]) // the last step ran after both
        #expect(batches.lasts == [false, true]) // the second taken once the body had ended
        pool.stop()
    }

    @Test func whatArrivedBeforeAFailureIsDrainedFirst() async throws {
        let stream = stream()
        let pool = ThreadPool(name: "test", threads: 1)
        let batches = Batches()
        #expect(append(stream, "kept"))
        stream.fail(.clientClosed)
        let lastStep = Atomic<Bool>(false)
        await #expect(throws: HTTPError.clientClosed) {
            try await stream.drain(on: pool, { batches.add($0, last: $1) }, then: { lastStep.store(true, ordering: .relaxed) })
        }
        #expect(batches.texts == ["kept"])
        let finished = lastStep.load(ordering: .relaxed)
        #expect(!finished) // a body that did not end whole is not finished
        pool.stop()
    }

    @Test func aFailingConsumerEndsTheDrainAndWhatFollowsIsDropped() async throws {
        struct DiskFull: Error {}
        let budget = BodyBudget(limit: 100)
        let stream = stream(budget: budget)
        let pool = ThreadPool(name: "test", threads: 1)
        let draining = Task { try await stream.drain(on: pool, { _, _ in throw DiskFull() }, then: {}) }
        try await waitUntil("the drain to start") { stream.isDraining }
        #expect(append(stream, "123456", high: 6))
        await #expect(throws: DiskFull.self) { try await draining.value }
        #expect(append(stream, "ignored", high: 6))
        #expect(budget.used == 0)
        pool.stop()
    }

    @Test func theLastStepRunsInTheJobOfTheLastBatchWhenTheBodyHadEnded() async throws {
        let stream = stream()
        let executor = CountingExecutor(ThreadPool(name: "test", threads: 1))
        let batches = Batches()
        #expect(append(stream, "whole"))
        stream.finish()
        #expect(try await stream.drain(on: executor, { batches.add($0, last: $1) }, then: { batches.texts }) == ["whole"])
        #expect(batches.lasts == [true])
        #expect(executor.jobs == 1) // the batch and the flush after it: one hop, not two
        executor.pool.stop()
    }

    @Test func theLastStepOfABodyEndingAfterItsLastBatchRunsOnTheExecutor() async throws {
        let stream = stream()
        let executor = CountingExecutor(ThreadPool(name: "test", threads: 1))
        let batches = Batches()
        let draining = Task {
            try await stream.drain(on: executor, { batches.add($0, last: $1) }, then: { executor.pool.indexOfCurrentThread != nil })
        }
        try await waitUntil("the drain to start") { stream.isDraining }
        #expect(append(stream, "123456", high: 6)) // full: the batch goes
        try await waitUntil("the batch to be consumed") { batches.texts == ["123456"] }
        stream.finish()
        #expect(try await draining.value) // on the executor's thread
        #expect(batches.lasts == [false]) // the body had not ended when it was taken
        #expect(executor.jobs == 2)
        executor.pool.stop()
    }

    @Test func whatTheLastStepThrowsEndsTheDrain() async throws {
        struct FlushFailed: Error {}
        let stream = stream()
        let pool = ThreadPool(name: "test", threads: 1)
        #expect(append(stream, "bytes"))
        stream.finish()
        await #expect(throws: FlushFailed.self) { try await stream.drain(on: pool, { _, _ in }, then: { throw FlushFailed() }) }
        pool.stop()
    }

    @Test func aWaitingReaderHearsOfTheFailure() async throws {
        let stream = stream()
        let reader = Task { try await stream.next() }
        try await waitUntil("the reader to wait") { stream.isReaderWaiting }
        stream.fail(HTTPError.requestTimeout("slow"))
        await #expect(throws: HTTPError.requestTimeout("slow")) { try await reader.value }
    }

    @Test func collectingRefusesMoreThanItsLimit() async throws {
        let stream = stream()
        #expect(append(stream, "12345"))
        stream.finish()
        await #expect(throws: HTTPError.self) { try await RequestBody(stream: stream).collect(upTo: 4) }
    }

    @Test func afterCloseNothingIsKept() async throws {
        let budget = BodyBudget(limit: 100)
        let stream = stream(budget: budget)
        #expect(append(stream, "dropped"))
        #expect(budget.used == 7)
        stream.close()
        #expect(budget.used == 0)
        #expect(append(stream, "ignored")) // the connection keeps reading, to discard
        #expect(budget.used == 0)
        await #expect(throws: HTTPError.self) { try await stream.next() }
    }

    // MARK: The budget all bodies share

    @Test func aBodyPastTheBudgetStopsReadingUntilBytesAreReleased() async throws {
        let budget = BodyBudget(limit: 10)
        let firstDemands = Demands(), secondDemands = Demands()
        let first = stream(budget: budget, firstDemands)
        let second = stream(budget: budget, secondDemands)
        #expect(!append(first, "123456789012")) // 12 of 10: stop
        #expect(!append(second, "x")) // the budget is spent for everyone
        #expect(secondDemands.value == 0)
        _ = try await first.next() // 8 released
        _ = try await first.next() // 4 released: room again
        #expect(budget.used == 1)
        #expect(secondDemands.value == 1) // the paused connection is told
    }

    @Test func aBatchStaysCountedWhileItIsConsumed() async throws {
        let budget = BodyBudget(limit: 100)
        let stream = stream(budget: budget)
        let pool = ThreadPool(name: "test", threads: 1)
        let consuming = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let draining = Task {
            try await stream.drain(on: pool, { _, _ in
                consuming.signal()
                // Bounded, but long: on a loaded machine a 10 s wait ran out before the check
                // below ran, and the batch was released under it.
                _ = release.wait(timeout: .now() + 120)
            }, then: {})
        }
        try await waitUntil("the drain to start") { stream.isDraining }
        #expect(append(stream, "123456", high: 6))
        #expect(await Task.detached { consuming.wait(timeout: .now() + 120) }.value == .success)
        #expect(budget.used == 6) // being written
        release.signal()
        stream.finish()
        try await draining.value
        #expect(budget.used == 0)
        pool.stop()
    }
}

/// Batches a drain consumed, as text, and whether each was the body's last.
final class Batches: Sendable {
    private let consumed = Mutex<[(text: String, last: Bool)]>([])
    func add(_ batch: [BodyChunk], last: Bool) { consumed.withLock { $0.append((String(decoding: batch.flatMap(\.bytes), as: UTF8.self), last)) } }
    var texts: [String] { consumed.withLock { $0.map(\.text) } }
    /// Whether each batch was told it was the body's last.
    var lasts: [Bool] { consumed.withLock { $0.map(\.last) } }
}

/// A pool that counts the jobs it is given: the hops a drain makes.
final class CountingExecutor: BlockingExecutor {
    let pool: ThreadPool
    private let count = Atomic<Int>(0)

    init(_ pool: ThreadPool) { self.pool = pool }

    func execute(_ job: @escaping @Sendable () -> Void) {
        count.wrappingAdd(1, ordering: .sequentiallyConsistent)
        pool.execute(job)
    }

    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        count.wrappingAdd(1, ordering: .sequentiallyConsistent)
        return try await pool.run(body)
    }

    var jobs: Int { count.load(ordering: .sequentiallyConsistent) }
}
