import Synchronization

/// Async work awaited by a thread that blocks: start-up, migrations and command-line tools,
/// which run before (or outside) any event loop. The work runs as a task on `pool`; the
/// calling thread must not be one of that pool's (nor one the work needs).
public enum BlockingWait {
    public static func run<T: Sendable>(on pool: ThreadPool, _ work: @escaping @Sendable () async throws -> T) throws -> T {
        assert(pool.indexOfCurrentThread == nil, "a blocking wait on the \(pool.name) pool from its own thread")
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = Latch()
        Task(executorPreference: pool) {
            let result: Result<T, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.open()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
