import Synchronization

/// Jobs that must not overlap, one after another in submission order, on a pool's threads:
/// the file operations of one resumable upload (a write, a rollback by a newer PATCH, an
/// fsync) go through its lane, so they never interleave, while other uploads' lanes run
/// beside it. Like a Dispatch queue targeting the pool; no thread is held while it is empty.
public final class SerialLane: Sendable {
    /// Told whether the pool is gone (the job must then fail rather than do its work).
    private typealias Job = @Sendable (_ poolStopped: Bool) -> Void

    private let pool: ThreadPool
    private let state = Mutex<(jobs: [Job], running: Bool)>(([], false))

    public init(pool: ThreadPool) {
        self.pool = pool
    }

    /// Runs `body` after every job submitted before it, on a pool thread.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            enqueue { [pool] stopped in
                continuation.resume(with: stopped ? .failure(PoolStopped(pool: pool.name)) : Result { try body() })
            }
        }
    }

    /// `run`, on the calling thread when the lane is idle (nothing queued or running) and the
    /// caller is a pool thread, which may block: a job that finds the lane free (a request's
    /// first step on its upload) runs without a hop there and back. Jobs submitted meanwhile
    /// wait for it, then go to the pool.
    public func runHereWhenIdle<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard ThreadPool.isCurrentThreadAPoolThread, takeIfIdle() else { return try await run(body) }
        defer { handOn() }
        return try body()
    }

    /// Marks the lane running, when it was idle (queued jobs mean it runs).
    private func takeIfIdle() -> Bool {
        state.withLock { state in
            guard !state.running else { return false }
            state.running = true
            return true
        }
    }

    /// After a job run in place: the jobs queued meanwhile go to the pool, or the lane is idle.
    private func handOn() {
        let more = state.withLock { state -> Bool in
            if state.jobs.isEmpty { state.running = false }
            return state.running
        }
        if more { startDraining() }
    }

    /// Runs `job` after every job submitted before it, without waiting for it (also when the
    /// pool has stopped: then on the caller's thread).
    public func submit(_ job: @escaping @Sendable () -> Void) {
        enqueue { _ in job() }
    }

    private func enqueue(_ job: @escaping Job) {
        let start = state.withLock { state -> Bool in
            state.jobs.append(job)
            defer { state.running = true }
            return !state.running
        }
        if start { startDraining() }
    }

    /// Runs the queued jobs on a pool thread; when the pool has stopped, fails them here rather
    /// than leave their callers waiting.
    private func startDraining() {
        if !pool.submit({ [self] _ in drain(poolStopped: false) }) { drain(poolStopped: true) }
    }

    /// Runs jobs until the lane is empty.
    private func drain(poolStopped: Bool) {
        while true {
            let next = state.withLock { state -> Job? in
                guard !state.jobs.isEmpty else {
                    state.running = false
                    return nil
                }
                return state.jobs.removeFirst()
            }
            guard let next else { return }
            next(poolStopped)
        }
    }
}
