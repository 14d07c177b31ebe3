/// A request's body as its handler reads it: an async sequence of owned chunks, in the order
/// they arrived. Nothing is read from the socket before a handler asks (so `100 Continue` is
/// sent only for a body that will be read), and the connection stops reading while the
/// handler falls behind (back-pressure through the stream's watermarks). A body can be read
/// once. Errors thrown while reading are `HTTPError`s: the body was too large, too slow, or
/// the client went away; a handler lets them propagate and its answer says so.
public struct RequestBody: Sendable, AsyncSequence {
    public typealias Element = [UInt8]

    let stream: BodyStream?

    init(stream: BodyStream?) {
        self.stream = stream
    }

    /// A request without a body.
    public static let empty = RequestBody(stream: nil)

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: BodyStream?

        public mutating func next() async throws -> [UInt8]? {
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
            bytes.append(contentsOf: chunk)
        }
        return bytes
    }

    /// The body in batches as large as the server's memory budget lets each body hold (up to
    /// `ServerConfiguration.bodyBatchBytes`): for handlers that write it to disk, one write for
    /// many reads.
    public var batches: Batches { Batches(stream: stream) }

    public struct Batches: Sendable, AsyncSequence {
        public typealias Element = [[UInt8]]
        let stream: BodyStream?

        public struct AsyncIterator: AsyncIteratorProtocol {
            let stream: BodyStream?

            public mutating func next() async throws -> [[UInt8]]? {
                try await stream?.nextBatch()
            }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(stream: stream)
        }
    }

    /// Body bytes received so far.
    public var bytesReceived: Int64 { stream?.received ?? 0 }
}
