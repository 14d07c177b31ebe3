import NTThreadPools

/// A request's body as its handler reads it: an async sequence of owned chunks (`BodyChunk`),
/// in the order they arrived. Nothing is read from the socket before a handler asks (so `100 Continue` is
/// sent only for a body that will be read), and the connection stops reading while the
/// handler falls behind (back-pressure through the stream's watermarks). A body can be read
/// once. Errors thrown while reading are `HTTPError`s: the body was too large, too slow, or
/// the client went away; a handler lets them propagate and its answer says so.
public struct RequestBody: Sendable, AsyncSequence {
    public typealias Element = BodyChunk

    let stream: BodyStream?

    init(stream: BodyStream?) {
        self.stream = stream
    }

    /// A request without a body.
    public static let empty = RequestBody(stream: nil)

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: BodyStream?

        public mutating func next() async throws -> BodyChunk? {
            try await stream?.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: stream)
    }

    /// The whole body in memory, for small bodies such as JSON: 413 past `limit` bytes (the
    /// route's own limit also applies, before a byte is read when the length is announced).
    public func collect(upTo limit: Int64) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self {
            guard Int64(bytes.count + chunk.count) <= limit else {
                throw HTTPError.payloadTooLarge("the body exceeds \(limit) bytes")
            }
            chunk.withUnsafeBytes { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// Consumes the body on a blocking executor (a thread pool, a serial lane) in batches as
    /// large as the server's memory budget lets each body hold (up to
    /// `ServerConfiguration.bodyBatchBytes`): one disk write for many socket reads. Each batch
    /// goes straight from the connection to the executor, whose thread goes on with the next
    /// when one is ready (`consume` is told when a batch is the body's last: the body had
    /// ended when it was taken), and after the last one with `finish` (the flush that makes the body
    /// durable: no hop back to the handler and out again before it); returns what `finish`
    /// returned. Throws what `consume` or `finish` threw, or why the body ended early once
    /// what arrived before was consumed (a resumable upload keeps every byte that reached the
    /// server; `finish` does not run then).
    public func drain<T: Sendable>(on executor: any BlockingExecutor, _ consume: @escaping @Sendable ([BodyChunk], _ last: Bool) throws -> Void,
                                   then finish: @escaping @Sendable () throws -> T) async throws -> T {
        guard let stream else { return try await executor.run(finish) }
        return try await stream.drain(on: executor, consume, then: finish)
    }

    /// Body bytes received so far.
    public var bytesReceived: Int64 { stream?.received ?? 0 }
}
