import Synchronization

/// The bytes of one request body between the event loop that reads them and the handler task
/// that consumes them. The loop appends owned copies of what it decoded; above the high
/// watermark `append` says stop, and the connection stops reading the socket (TCP then holds
/// the client back). When the consumer has taken the stream down to the low watermark, or asks
/// for the body for the first time, `onDemand` tells the connection (which may then send
/// `100 Continue` and read again). One consumer at a time.
final class BodyStream: Sendable {
    /// How the body ended: whole, or not (the error says why: too large, too slow, gone).
    private enum End {
        case finished
        case failed(HTTPError)
    }

    private enum Waiter {
        case chunk(CheckedContinuation<[UInt8]?, any Error>)
        case batch(CheckedContinuation<[[UInt8]]?, any Error>)
    }

    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0
        var buffered = 0
        var end: End?
        var waiter: Waiter?
        /// The consumer has asked for bytes at least once.
        var demanded = false
        /// The connection stopped reading because `buffered` reached the high watermark.
        var producerPaused = false
        var lowWatermark = 0
        /// Nobody will consume any more (the exchange moved on): appends are dropped.
        var closed = false
        var received: Int64 = 0

        mutating func takeOne() -> [UInt8]? {
            guard head < chunks.count else { return nil }
            let chunk = chunks[head]
            chunks[head] = []
            head += 1
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            }
            buffered -= chunk.count
            return chunk
        }

        mutating func takeAll() -> [[UInt8]] {
            let all = Array(chunks[head...])
            chunks.removeAll(keepingCapacity: true)
            head = 0
            buffered = 0
            return all
        }

        /// Whether taking bytes should wake the paused producer.
        mutating func releaseProducer() -> Bool {
            guard producerPaused, buffered <= lowWatermark else { return false }
            producerPaused = false
            return true
        }
    }

    private let state = Mutex(State())
    private let onDemand: @Sendable () -> Void

    init(onDemand: @escaping @Sendable () -> Void) {
        self.onDemand = onDemand
    }

    // MARK: The connection's side (its event loop)

    /// Appends a copy of `bytes`; returns false when the connection should stop reading until
    /// `onDemand` (the stream holds `highWatermark` bytes or more and nobody is taking them).
    func append(_ bytes: UnsafeRawBufferPointer, highWatermark: Int) -> Bool {
        let chunk = [UInt8](bytes)
        var resumeChunk: CheckedContinuation<[UInt8]?, any Error>?
        var resumeBatch: (CheckedContinuation<[[UInt8]]?, any Error>, [[UInt8]])?
        let keepReading = state.withLock { state -> Bool in
            guard !state.closed, state.end == nil else { return true }
            state.received += Int64(chunk.count)
            if case .chunk(let continuation) = state.waiter, state.buffered == 0 {
                state.waiter = nil
                resumeChunk = continuation
                return true
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            guard state.buffered >= highWatermark else { return true }
            if case .batch(let continuation) = state.waiter {
                // A batch is as large as the watermark allows: hand it over and keep reading.
                state.waiter = nil
                resumeBatch = (continuation, state.takeAll())
                return true
            }
            state.producerPaused = true
            state.lowWatermark = highWatermark / 2
            return false
        }
        resumeChunk?.resume(returning: chunk)
        if let (continuation, batch) = resumeBatch { continuation.resume(returning: batch) }
        return keepReading
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
        let waiter = state.withLock { state -> Waiter? in
            state.closed = true
            _ = state.takeAll()
            if state.end == nil { state.end = .failed(.clientClosed) }
            defer { state.waiter = nil }
            return state.waiter
        }
        resume(waiter, with: .failure(HTTPError.clientClosed))
    }

    /// Bytes received so far.
    var received: Int64 { state.withLock { $0.received } }

    /// Whether the handler is suspended waiting for bytes.
    var isReaderWaiting: Bool { state.withLock { $0.waiter != nil } }

    private func end(_ end: End) {
        let (waiter, outcome) = state.withLock { state -> (Waiter?, Result<[[UInt8]]?, any Error>?) in
            guard state.end == nil else { return (nil, nil) }
            state.end = end
            guard let waiter = state.waiter else { return (nil, nil) }
            state.waiter = nil
            switch waiter {
            case .chunk:
                return (waiter, Self.ended(end, next: state.takeOne().map { [$0] }))
            case .batch:
                let rest = state.takeAll()
                return (waiter, Self.ended(end, next: rest.isEmpty ? nil : rest))
            }
        }
        resume(waiter, with: outcome)
    }

    private static func ended(_ end: End, next: [[UInt8]]?) -> Result<[[UInt8]]?, any Error> {
        if let next { return .success(next) }
        switch end {
        case .finished: return .success(nil)
        case .failed(let error): return .failure(error)
        }
    }

    private func resume(_ waiter: Waiter?, with outcome: Result<[[UInt8]]?, any Error>?) {
        guard let waiter, let outcome else { return }
        switch waiter {
        case .chunk(let continuation): continuation.resume(with: outcome.map { $0?.first })
        case .batch(let continuation): continuation.resume(with: outcome)
        }
    }

    // MARK: The handler's side

    /// The next chunk as it arrived; nil at the end of the body.
    func next() async throws -> [UInt8]? {
        enum Step {
            case value([UInt8]?)
            case error(any Error)
            case wait
        }
        var signal = false
        let step = state.withLock { state -> Step in
            if !state.demanded {
                state.demanded = true
                signal = true
            }
            if let chunk = state.takeOne() {
                signal = state.releaseProducer() || signal
                return .value(chunk)
            }
            switch state.end {
            case .finished: return .value(nil)
            case .failed(let error): return .error(error)
            case nil: return .wait
            }
        }
        if signal { onDemand() }
        switch step {
        case .value(let chunk): return chunk
        case .error(let error): throw error
        case .wait: break
        }
        return try await withCheckedThrowingContinuation { continuation in
            var signal = false
            let outcome = state.withLock { state -> Result<[UInt8]?, any Error>? in
                // Anything may have happened since the check above.
                if let chunk = state.takeOne() {
                    signal = state.releaseProducer()
                    return .success(chunk)
                }
                switch state.end {
                case .finished: return .success(nil)
                case .failed(let error): return .failure(error)
                case nil:
                    precondition(state.waiter == nil, "a request body has one reader at a time")
                    state.waiter = .chunk(continuation)
                    return nil
                }
            }
            if signal { onDemand() }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Everything buffered, once the stream holds a batch's worth (the high watermark, at which
    /// the connection would stop reading) or the body ended; nil at the end. Consumers that
    /// write to disk take the body this way: one write for many reads.
    func nextBatch() async throws -> [[UInt8]]? {
        var signal = false
        let outcome = state.withLock { state -> Result<[[UInt8]]?, any Error>? in
            if !state.demanded {
                state.demanded = true
                signal = true
            }
            return Self.takeBatch(&state, signal: &signal)
        }
        if signal { onDemand() }
        if let outcome { return try outcome.get() }
        return try await withCheckedThrowingContinuation { continuation in
            var signal = false
            let outcome = state.withLock { state -> Result<[[UInt8]]?, any Error>? in
                // Anything may have happened since the check above.
                if let outcome = Self.takeBatch(&state, signal: &signal) { return outcome }
                precondition(state.waiter == nil, "a request body has one reader at a time")
                state.waiter = .batch(continuation)
                return nil
            }
            if signal { onDemand() }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// The batch to hand out now, if there is one: all that is buffered once the producer is
    /// paused or the body ended; nil: wait.
    private static func takeBatch(_ state: inout State, signal: inout Bool) -> Result<[[UInt8]]?, any Error>? {
        guard state.producerPaused || state.end != nil else { return nil }
        let batch = state.takeAll()
        if state.releaseProducer() { signal = true }
        if !batch.isEmpty { return .success(batch) }
        switch state.end {
        case .finished: return .success(nil)
        case .failed(let error): return .failure(error)
        case nil: return nil
        }
    }
}
