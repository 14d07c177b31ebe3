import Synchronization
import NTThreadPools

/// The bytes of one request body between the event loop that reads them and the handler that
/// consumes them. The loop appends what it decoded (copied into pooled buffers, or read
/// straight into them); above the high watermark, or past the server's `BodyBudget`, `append`
/// says stop, and the connection stops reading the socket (TCP then holds the client back).
/// When the consumer has taken the stream down to the low watermark, or the budget has room
/// again, or the consumer asks for the body for the first time, `onDemand` tells the
/// connection (which may then send `100 Continue` and read again).
///
/// Two ways to consume, one at a time: chunk by chunk (`next`), or `drain`, where each batch
/// (all that is buffered once the stream is full or the body ended) goes straight from the
/// loop to a blocking executor, whose thread goes on with the next batch when one is ready,
/// and after the last one with the consumer's last step (an fsync): one disk write for many
/// reads, and no hop through the handler per batch or before the last step.
final class BodyStream: Sendable {
    /// How the body ended: whole, or not (the error says why: too large, too slow, gone).
    private enum End {
        case finished
        case failed(HTTPError)
    }

    /// A consumer draining the body on a blocking executor.
    private struct Drain {
        let executor: any BlockingExecutor
        /// Told each batch, and whether it is the body's last (the body had ended when it was
        /// taken).
        let consume: @Sendable ([BodyChunk], _ last: Bool) throws -> Void
        /// The body ended whole: runs the consumer's last step (on the executor) and resumes
        /// the consumer with its outcome.
        let succeed: @Sendable () -> Void
        /// Resumes the consumer with why the drain stopped.
        let fail: @Sendable (any Error) -> Void
        /// A batch is being consumed on the executor.
        var busy = false
    }

    private struct State {
        /// Taken slots are emptied at once, so a chunk leaves with its taker.
        var chunks: [BodyChunk?] = []
        var head = 0
        var buffered = 0
        var end: End?
        /// A `next` waiting for bytes.
        var reader: CheckedContinuation<BodyChunk?, any Error>?
        var drain: Drain?
        /// The consumer has asked for bytes at least once.
        var demanded = false
        /// The connection stopped reading: `buffered` reached the high watermark, or the budget
        /// is spent (`pausedForBudget`).
        var producerPaused = false
        var pausedForBudget = false
        var lowWatermark = 0
        /// The bytes of the batch being consumed, counted in the budget until it is done.
        var held = 0
        /// Nobody will consume any more (the exchange moved on, or the drain failed): appends
        /// are dropped.
        var closed = false
        var received: Int64 = 0

        mutating func takeOne() -> BodyChunk? {
            guard head < chunks.count else { return nil }
            let chunk = chunks[head]!
            chunks[head] = nil
            head += 1
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            }
            buffered -= chunk.count
            return chunk
        }

        mutating func takeAll() -> [BodyChunk] {
            let all = chunks[head...].map { $0! }
            chunks.removeAll(keepingCapacity: true)
            head = 0
            buffered = 0
            return all
        }

        /// Whether taking bytes should wake the paused producer.
        mutating func releaseProducer() -> Bool {
            guard producerPaused, buffered <= lowWatermark else { return false }
            producerPaused = false
            pausedForBudget = false
            return true
        }

        /// The next batch for an idle drain: all that is buffered, once the producer is paused
        /// (the stream is full, or the budget spent) or the body ended (then it is the last).
        mutating func nextBatch() -> Batch? {
            guard let drain, !drain.busy, buffered > 0, producerPaused || end != nil else { return nil }
            self.drain!.busy = true
            held = buffered
            return Batch(chunks: takeAll(), last: end != nil)
        }
    }

    /// A drain's batch: the chunks, and whether the body had ended when they were taken.
    private struct Batch {
        let chunks: [BodyChunk]
        let last: Bool
    }

    private let state = Mutex(State())
    private let budget: BodyBudget
    private let buffers: BodyBufferPool
    private let onDemand: @Sendable () -> Void

    init(budget: BodyBudget, buffers: BodyBufferPool, onDemand: @escaping @Sendable () -> Void) {
        self.budget = budget
        self.buffers = buffers
        self.onDemand = onDemand
    }

    deinit {
        let outstanding = state.withLock { $0.closed ? 0 : $0.buffered + $0.held }
        budget.release(outstanding)
    }

    // MARK: The connection's side (its event loop)

    /// A buffer of the stream's pool to read body bytes into (then `append(_ chunk:)`).
    func makeChunk() -> BodyChunk {
        BodyChunk(pool: buffers)
    }

    /// Appends a chunk read straight from the socket, without copying it (small ones are
    /// copied into the last buffer instead, so that buffers stay full); returns as `append`.
    func append(_ chunk: BodyChunk, highWatermark: Int) -> Bool {
        if chunk.count < buffers.bufferSize / 4 {
            return chunk.withUnsafeBytes { append($0, highWatermark: highWatermark) }
        }
        return append(count: chunk.count, highWatermark: highWatermark) { state in
            state.chunks.append(chunk)
        }
    }

    /// Appends a copy of `bytes` (into the last buffer while it has room); returns false when
    /// the connection should stop reading until `onDemand` (the stream holds `highWatermark`
    /// bytes or more and nobody is taking them, or the budget is spent).
    func append(_ bytes: UnsafeRawBufferPointer, highWatermark: Int) -> Bool {
        append(count: bytes.count, highWatermark: highWatermark) { [buffers] state in
            var copied = 0
            while copied < bytes.count {
                if state.head == state.chunks.count || state.chunks[state.chunks.count - 1]!.room == 0 {
                    state.chunks.append(BodyChunk(pool: buffers))
                }
                copied += state.chunks[state.chunks.count - 1]!.append(UnsafeRawBufferPointer(rebasing: bytes[copied...]))
            }
        }
    }

    /// Adds `count` bytes, which `store` puts into the chunk list.
    private func append(count: Int, highWatermark: Int, _ store: (inout State) -> Void) -> Bool {
        var wake: (CheckedContinuation<BodyChunk?, any Error>, BodyChunk)?
        var batch: (Drain, Batch)?
        var pausedForBudget = false
        var taken = 0
        let keepReading = state.withLock { state -> Bool in
            guard !state.closed, state.end == nil else { return true }
            state.received += Int64(count)
            store(&state)
            state.buffered += count
            let room = budget.take(count)
            if let reader = state.reader {
                // A reader is waiting (so nothing was buffered): it takes the first chunk now.
                state.reader = nil
                let chunk = state.takeOne()!
                taken = chunk.count
                wake = (reader, chunk)
                if room { return true }
            }
            guard state.buffered >= highWatermark || !room else { return true }
            state.producerPaused = true
            state.pausedForBudget = !room
            state.lowWatermark = highWatermark / 2
            if let next = state.nextBatch() {
                // A batch as large as the watermark (or the budget) allows goes to the drain;
                // reading goes on unless the budget is spent.
                batch = (state.drain!, next)
                if room {
                    state.producerPaused = false
                    return true
                }
            }
            pausedForBudget = !room
            return false
        }
        budget.release(taken)
        if let (reader, chunk) = wake { reader.resume(returning: chunk) }
        if let (drain, next) = batch { consume(next, drain) }
        if pausedForBudget && budget.hasRoom(orWake: { [weak self] in self?.budgetHasRoom() }) {
            // Freed meanwhile: no need to wait.
            budgetHasRoom()
        }
        return keepReading
    }

    /// The budget has room again: read on (unless the stream itself is full).
    private func budgetHasRoom() {
        let resume = state.withLock { state -> Bool in
            guard state.producerPaused, state.pausedForBudget else { return false }
            state.pausedForBudget = false
            state.producerPaused = false
            return true
        }
        if resume { onDemand() }
    }

    /// The body is whole.
    func finish() {
        end(.finished)
    }

    /// The body will not be whole. What arrived before is still handed out first, so that a
    /// resumable upload keeps every byte that reached the server; then the error is thrown.
    func fail(_ error: HTTPError) {
        end(.failed(error))
    }

    /// Nobody will read any more: what is buffered is dropped, and so is what follows.
    func close() {
        var idleDrain: Drain?
        let (reader, outstanding) = state.withLock { state -> (CheckedContinuation<BodyChunk?, any Error>?, Int) in
            guard !state.closed else { return (nil, 0) }
            state.closed = true
            let outstanding = state.buffered + state.held
            state.held = 0
            _ = state.takeAll()
            if state.end == nil { state.end = .failed(.clientClosed) }
            if let drain = state.drain, !drain.busy {
                idleDrain = drain
                state.drain = nil
            }
            defer { state.reader = nil }
            return (state.reader, outstanding)
        }
        budget.release(outstanding)
        reader?.resume(throwing: HTTPError.clientClosed)
        if let idleDrain { complete(idleDrain, HTTPError.clientClosed) }
    }

    /// Bytes received so far.
    var received: Int64 { state.withLock { $0.received } }

    /// Whether a `next` is suspended waiting for bytes.
    var isReaderWaiting: Bool { state.withLock { $0.reader != nil } }

    /// Whether a `drain` is consuming the body.
    var isDraining: Bool { state.withLock { $0.drain != nil } }

    private func end(_ end: End) {
        var released = 0
        var wake: (CheckedContinuation<BodyChunk?, any Error>, Result<BodyChunk?, any Error>)?
        var batch: (Drain, Batch)?
        var finished: (Drain, (any Error)?)?
        state.withLock { state in
            guard state.end == nil else { return }
            state.end = end
            if let reader = state.reader {
                state.reader = nil
                let chunk = state.takeOne()
                released = chunk?.count ?? 0
                wake = (reader, chunk.map { .success($0) } ?? Self.ended(end))
            }
            if let next = state.nextBatch() {
                batch = (state.drain!, next)
            } else if let drain = state.drain, !drain.busy {
                state.drain = nil
                finished = (drain, Self.failure(end))
            }
        }
        budget.release(released)
        if let (reader, outcome) = wake { reader.resume(with: outcome) }
        if let (drain, next) = batch { consume(next, drain) }
        if let (drain, failure) = finished { complete(drain, failure) }
    }

    private static func ended(_ end: End) -> Result<BodyChunk?, any Error> {
        failure(end).map { .failure($0) } ?? .success(nil)
    }

    private static func failure(_ end: End) -> (any Error)? {
        if case .failed(let error) = end { return error }
        return nil
    }

    // MARK: The handler's side

    /// The next chunk as it arrived; nil at the end of the body.
    func next() async throws -> BodyChunk? {
        enum Step {
            case value(BodyChunk?)
            case error(any Error)
            case wait
        }
        var signal = false
        var released = 0
        let step = state.withLock { state -> Step in
            signal = Self.demand(&state)
            if let chunk = state.takeOne() {
                released = chunk.count
                signal = state.releaseProducer() || signal
                return .value(chunk)
            }
            switch state.end {
            case .finished: return .value(nil)
            case .failed(let error): return .error(error)
            case nil: return .wait
            }
        }
        budget.release(released)
        if signal { onDemand() }
        switch step {
        case .value(let chunk): return chunk
        case .error(let error): throw error
        case .wait: break
        }
        return try await withCheckedThrowingContinuation { continuation in
            var signal = false
            var released = 0
            let outcome = state.withLock { state -> Result<BodyChunk?, any Error>? in
                // Anything may have happened since the check above.
                if let chunk = state.takeOne() {
                    released = chunk.count
                    signal = state.releaseProducer()
                    return .success(chunk)
                }
                if let end = state.end { return Self.ended(end) }
                precondition(state.reader == nil && state.drain == nil, "a request body has one reader at a time")
                state.reader = continuation
                return nil
            }
            budget.release(released)
            if signal { onDemand() }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Consumes the whole body on `executor` in batches, each as large as the stream's high
    /// watermark (or the budget) allows (`consume` told which is the last, when the body had
    /// ended as it was taken: its flush follows), then runs `finish` there (in the job that consumed
    /// the last batch, when the body had ended by then) and returns what it returned. Throws
    /// what `consume` or `finish` threw (nothing more is read then), or why the body ended
    /// early, after what arrived before was consumed (`finish` does not run then).
    func drain<T: Sendable>(on executor: any BlockingExecutor, _ consume: @escaping @Sendable ([BodyChunk], _ last: Bool) throws -> Void,
                            then finish: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, any Error>) in
            var signal = false
            var batch: (Drain, Batch)?
            var finished: (Drain, (any Error)?)?
            state.withLock { state in
                precondition(state.reader == nil && state.drain == nil, "a request body has one reader at a time")
                signal = Self.demand(&state)
                let drain = Drain(executor: executor, consume: consume, succeed: { done.resume(with: Result { try finish() }) },
                                  fail: { done.resume(throwing: $0) })
                state.drain = drain
                if let next = state.nextBatch() {
                    batch = (state.drain!, next)
                    signal = state.releaseProducer() || signal
                } else if let end = state.end {
                    state.drain = nil
                    finished = (drain, Self.failure(end))
                }
            }
            if signal { onDemand() }
            if let (drain, next) = batch { self.consume(next, drain) }
            if let (drain, failure) = finished { complete(drain, failure) }
        }
    }

    /// Consumes a batch on the drain's executor; its thread goes on with the next batch when
    /// one is ready, and finishes the drain at the end of the body.
    private func consume(_ batch: Batch, _ drain: Drain) {
        drain.executor.execute { [self] in
            var next: Batch? = batch
            while let current = next {
                next = nil
                let failure: (any Error)?
                do {
                    try drain.consume(current.chunks, current.last)
                    failure = nil
                } catch {
                    failure = error
                }
                var signal = false
                var finished: (any Error)??
                let released = state.withLock { state -> Int in
                    var released = state.held
                    state.held = 0
                    state.drain?.busy = false
                    if let failure {
                        // Nothing more is wanted: what follows is dropped.
                        state.closed = true
                        released += state.buffered
                        _ = state.takeAll()
                        state.drain = nil
                        finished = .some(failure)
                        return released
                    }
                    next = state.nextBatch()
                    if next == nil, let end = state.end {
                        state.drain = nil
                        finished = .some(Self.failure(end))
                    }
                    signal = state.releaseProducer()
                    return released
                }
                budget.release(released)
                if signal { onDemand() }
                if let finished { complete(drain, finished, onTheExecutor: true) }
            }
        }
    }

    /// Ends a drain: with its failure, or by its last step, on its executor (in place when
    /// called from the job that consumed the last batch, else after a hop there).
    private func complete(_ drain: Drain, _ failure: (any Error)?, onTheExecutor: Bool = false) {
        if let failure {
            drain.fail(failure)
        } else if onTheExecutor {
            drain.succeed()
        } else {
            drain.executor.execute(drain.succeed)
        }
    }

    /// The consumer asks for bytes: the first time, the connection hears of it, unless the
    /// body is whole already (it came with the head: nothing is left to read, no `100
    /// Continue` to send, and a loop woken for that would do nothing).
    private static func demand(_ state: inout State) -> Bool {
        guard !state.demanded else { return false }
        state.demanded = true
        return state.end == nil
    }
}
