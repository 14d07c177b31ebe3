import NTThreadPools

/// One buffer of bytes, read in place: what a blob is written from.
package protocol ByteBuffer {
    var count: Int { get }
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
}

/// Bytes that arrive in batches: what a blob store receives (a request's body, through
/// `RequestBody+ByteStream`; the stores know no HTTP). Each batch is handed to `consume` on
/// `executor`, in order, and the stream's own failure (its sender went away, a limit) is
/// thrown.
package protocol ByteStream: Sendable {
    associatedtype Buffer: ByteBuffer
    func drain(on executor: any BlockingExecutor, _ consume: @escaping @Sendable ([Buffer]) throws -> Void) async throws
}
