/// Where blocking jobs can be sent: a `ThreadPool`, or a `SerialLane` when the jobs must not
/// overlap.
public protocol BlockingExecutor: Sendable {
    /// Runs `job` there without waiting for it.
    func execute(_ job: @escaping @Sendable () -> Void)
    /// Runs `body` there and returns what it returned or throws what it threw (`PoolStopped`
    /// once the pool has stopped).
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T
}

extension ThreadPool: BlockingExecutor {
    public func execute(_ job: @escaping @Sendable () -> Void) {
        // A stopped pool runs the job here: its caller must hear the outcome.
        if !submit({ _ in job() }) { job() }
    }
}

extension SerialLane: BlockingExecutor {
    public func execute(_ job: @escaping @Sendable () -> Void) {
        submit(job)
    }
}
