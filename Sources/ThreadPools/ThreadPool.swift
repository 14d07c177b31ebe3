#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Synchronization

/// A fixed set of threads. Two uses:
/// - the calls that block (file writes, `fsync`, `rename`, hashing a large file, SQLite): async
///   code hands them over with `run` and is resumed with the result, so no event loop and no
///   thread of Swift's cooperative pool ever waits on a disk (NIO's `NIOThreadPool`);
/// - as a `TaskExecutor`, the threads request handlers run on, so that a server does not
///   depend on its host leaving Swift's cooperative pool free (a test or a tool that blocks
///   those threads would starve the handlers).
/// Jobs start in the order they were submitted. Each job is told the index of the thread that
/// runs it (0..<threads), so a pool can give each thread a resource of its own: the SQLite
/// pool gives each reader thread its own connection.
public final class ThreadPool: TaskExecutor, Sendable {
    public let name: String
    public let threadCount: Int
    private let queue: JobQueue

    /// Starts `threads` threads (0: one per online CPU). `niceness` above 0 lowers their
    /// priority, so that bulk work (hashing and writing uploads) gives way to the threads that
    /// answer requests. `beforeEachJob`, when given, runs on the pool thread before every job:
    /// tests inject a slow disk with it.
    public init(name: String, threads: Int, niceness: Int32 = 0, beforeEachJob: (@Sendable () -> Void)? = nil) {
        let threads = threads > 0 ? threads : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        self.name = name
        self.threadCount = threads
        queue = JobQueue()
        for index in 0..<threads {
            let queue = self.queue
            let identity = ThreadIdentity(pool: ObjectIdentifier(queue), index: index)
            startThread(named: "\(name)-\(index)") {
                identity.adopt()
                if niceness != 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(nt_gettid()), niceness) }
                while let job = queue.take() {
                    beforeEachJob?()
                    job(index)
                }
            }
        }
    }

    deinit { queue.stop() }

    /// Runs `body` on a pool thread and returns what it returned or throws what it threw.
    public func run<T: Sendable>(_ body: @escaping @Sendable (_ thread: Int) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = queue.put { thread in continuation.resume(with: Result { try body(thread) }) }
            if !accepted { continuation.resume(throwing: PoolStopped(pool: name)) }
        }
    }

    /// `run` for work that does not need to know its thread.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await run { (_: Int) in try body() }
    }

    /// Runs `job` on a pool thread without waiting for it (clean-up nobody waits for). Returns
    /// false when the pool has stopped and the job will not run.
    @discardableResult
    public func submit(_ job: @escaping @Sendable (_ thread: Int) -> Void) -> Bool {
        queue.put(job)
    }

    /// Runs `body` on a pool thread and blocks the calling thread until it is done: for
    /// start-up and command-line tools only, never on a request's path.
    public func runAndWait<T: Sendable>(_ body: @escaping @Sendable (_ thread: Int) throws -> T) throws -> T {
        try waitFor { finish in queue.put { thread in finish(Result { try body(thread) }) } }
    }

    /// Runs async `work` as a task on this pool and blocks the calling thread until it is done:
    /// start-up and command-line tools only (`SQLStorage.readBlocking`, `writeBlocking`).
    public func runAndWait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        try waitFor { finish in
            Task(executorPreference: self) {
                do { finish(.success(try await work())) } catch { finish(.failure(error)) }
            }
            return true
        }
    }

    /// Blocks until `start`'s work calls `finish`; throws when `start` could not begin it.
    private func waitFor<T: Sendable>(_ start: (_ finish: @escaping @Sendable (Result<T, any Error>) -> Void) -> Bool) throws -> T {
        // A pool thread (request handlers run on one) blocking on a pool stalls every task
        // queued behind it, and deadlocks when the pool is its own.
        assert(ThreadIdentity.current == nil, "runAndWait on the \(name) pool from a pool thread: await run instead")
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = Latch()
        guard start({ result in
            outcome.withLock { $0 = result }
            done.open()
        }) else { throw PoolStopped(pool: name) }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// The index of the calling thread when it is one of this pool's; nil otherwise. A pool
    /// whose threads own a resource each (a database connection) uses it to run work for its
    /// own threads in place.
    public var indexOfCurrentThread: Int? {
        ThreadIdentity.current.flatMap { $0.pool == ObjectIdentifier(queue) ? $0.index : nil }
    }

    /// Lets the threads finish what is queued and exit. Jobs submitted afterwards are refused.
    public func stop() { queue.stop() }

    /// Runs a task's job on a pool thread (`Task(executorPreference: pool)`).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = queue.put { [self] _ in job.runSynchronously(on: asUnownedTaskExecutor()) }
        // A stopped pool still runs what it is given, so no task is left suspended for ever.
        if !accepted { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}

/// The pool stopped before the job could run.
public struct PoolStopped: Error, Sendable, CustomStringConvertible {
    public let pool: String
    public init(pool: String) { self.pool = pool }
    public var description: String { "the \(pool) thread pool has stopped" }
}

/// Jobs in FIFO order behind a mutex and a condition variable: pool threads sleep in `take`
/// until there is work.
private final class JobQueue: @unchecked Sendable {
    typealias Job = @Sendable (Int) -> Void

    private let condition = ConditionLock()
    // Guarded by `condition`. A taken job's slot is emptied at once: under steady load the
    // queue never drains, and a kept closure would keep what it captured (a body's write batch).
    private var jobs: [Job?] = []
    private var head = 0
    private var stopping = false

    func put(_ job: @escaping Job) -> Bool {
        condition.withLock {
            guard !stopping else { return false }
            jobs.append(job)
            condition.signal()
            return true
        }
    }

    /// The next job; nil once stopping and nothing is left.
    func take() -> Job? {
        condition.withLock {
            while head == jobs.count {
                if stopping { return nil }
                condition.wait()
            }
            let job = jobs[head]
            jobs[head] = nil
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: jobs.count <= 1024)
                head = 0
            } else if head >= 1024 && head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job!
        }
    }

    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }
}

/// A one-shot gate a thread waits on until another opens it.
private final class Latch: @unchecked Sendable {
    private let condition = ConditionLock()
    private var isOpen = false

    func open() {
        condition.withLock {
            isOpen = true
            condition.broadcast()
        }
    }

    func wait() {
        condition.withLock {
            while !isOpen { condition.wait() }
        }
    }
}

/// A pthread mutex with a condition variable, for threads that sleep until told.
private final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Inside `withLock`: sleeps until signalled (or spuriously; callers loop on their state).
    func wait() { pthread_cond_wait(condition, mutex) }
    func signal() { pthread_cond_signal(condition) }
    func broadcast() { pthread_cond_broadcast(condition) }
}

/// Which pool thread the calling thread is, kept in a thread-specific slot.
private final class ThreadIdentity: Sendable {
    let pool: ObjectIdentifier
    let index: Int

    init(pool: ObjectIdentifier, index: Int) {
        self.pool = pool
        self.index = index
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Marks the calling thread as this one, for its whole life (pool threads never exit
    /// before their pool is done).
    func adopt() {
        pthread_setspecific(Self.key, Unmanaged.passRetained(self).toOpaque())
    }

    static var current: ThreadIdentity? {
        pthread_getspecific(key).map { Unmanaged<ThreadIdentity>.fromOpaque($0).takeUnretainedValue() }
    }
}
