/// Where blocking jobs can be sent without waiting for them: a `ThreadPool`, or a
/// `SerialLane` when the jobs must not overlap.
public protocol BlockingExecutor: Sendable {
    func execute(_ job: @escaping @Sendable () -> Void)
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
