import NTThreadPools

/// One buffer of bytes, read in place: what a blob is written from.
package protocol ByteBuffer {
    var count: Int { get }
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
}

/// Bytes that arrive in batches: what a blob store receives (a request's body, through
/// `RequestBody+ByteStream`; the stores know no HTTP). Each batch is handed to `consume` on
/// `executor`, in order (told whether it is the body's last, when the stream knew it then),
/// then `finish` runs there (a flush: in the job of the last batch when
/// it can, without a hop between them) and its result is returned; the stream's own failure
/// (its sender went away, a limit) is thrown instead, and `finish` does not run.
package protocol ByteStream: Sendable {
    associatedtype Buffer: ByteBuffer
    func drain<T: Sendable>(on executor: any BlockingExecutor, _ consume: @escaping @Sendable ([Buffer], _ last: Bool) throws -> Void,
                            then finish: @escaping @Sendable () throws -> T) async throws -> T
}
