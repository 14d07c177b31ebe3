/// One thread of its own as an actor's executor: an actor whose work blocks (SQLite commits
/// with `synchronous=FULL`, file copies and fsyncs) runs there instead of on Swift's shared
/// cooperative threads, which in a host app are everyone's. Jobs run one at a time, in order.
/// The thread ends when the executor is released.
public final class SerialThread: SerialExecutor, Sendable {
    private let thread: ThreadPool

    public init(name: String) {
        thread = ThreadPool(name: name, threads: 1)
    }

    deinit { thread.stop() }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = thread.submit { [self] _ in job.runSynchronously(on: asUnownedSerialExecutor()) }
        // Stopped (being released): still run it, so no task is left suspended for ever.
        if !accepted { job.runSynchronously(on: asUnownedSerialExecutor()) }
    }

    /// Whether the calling thread is this executor's.
    public var isCurrent: Bool { thread.indexOfCurrentThread != nil }
}
