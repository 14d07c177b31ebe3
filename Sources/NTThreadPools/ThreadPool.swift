#if canImport(Glibc)
import Glibc
#endif
import CNTLinux
import Dispatch
import Synchronization

/// A fixed set of threads. Two uses:
/// - the calls that block (file writes, `fsync`, `rename`, hashing a large file, SQLite): async
///   code hands them over with `run` and is resumed with the result, so no event loop and no
///   thread of Swift's cooperative pool ever waits on a disk (NIO's `NIOThreadPool`);
/// - as a `TaskExecutor`, the threads request handlers run on, so that a server does not
///   depend on its host leaving Swift's cooperative pool free (a test or a tool that blocks
///   those threads would starve the handlers).
/// Jobs given to the pool start in the order given, on whichever thread is free. Each job is
/// told the index of the thread that runs it (0..<threads), so a pool can give each thread a
/// resource of its own: the SQLite pool gives each reader thread its own connection.
///
/// A pool made with `io` gives each thread descriptors of its own to watch (PostgreSQL's
/// handler threads each drive their own connection): the thread polls them when it has no job,
/// and turns its `ThreadIO` after each run of jobs. There a task resumed by one of the pool's
/// threads stays on that thread (the answer its connection read), with no hand-over.
public final class ThreadPool: TaskExecutor, Sendable {
    public let name: String
    public let threadCount: Int
    private let queue: JobQueue
    private let keepsOwnJobs: Bool

    /// Starts `threads` threads (0: one per online CPU). `niceness` above 0 lowers their
    /// priority, so that bulk work (hashing and writing uploads) gives way to the threads that
    /// answer requests. `beforeEachJob`, when given, runs on the pool thread before every job:
    /// tests inject a slow disk with it. `io` gives each thread (by its index, on the thread)
    /// what it watches besides its jobs.
    public init(name: String, threads: Int, niceness: Int32 = 0, beforeEachJob: (@Sendable () -> Void)? = nil,
                io: (@Sendable (_ thread: Int) -> any ThreadIO)? = nil) {
        let threads = threads > 0 ? threads : Self.onlineCPUs
        self.name = name
        self.threadCount = threads
        keepsOwnJobs = io != nil
        queue = JobQueue(threads: threads)
        ThreadCensus.enroll(ObjectIdentifier(queue), group: name) { [queue] in queue.waiting }
        for index in 0..<threads {
            let queue = self.queue
            let identity = ThreadIdentity(pool: ObjectIdentifier(queue), index: index)
            startThread(named: "\(name)-\(index)", group: name) {
                identity.adopt()
                if niceness != 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(nt_gettid()), niceness) }
                let watched = io?(index)
                queue.serve(index, watched) { job in
                    beforeEachJob?()
                    job(index)
                }
                watched?.stopped()
            }
        }
    }

    deinit {
        ThreadCensus.leave(ObjectIdentifier(queue))
        queue.stop()
    }

    /// The CPUs online: the thread count of a pool made with 0.
    public static var onlineCPUs: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

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

    /// Runs `work` as the calling task on a thread made for it, let go when `work` returns:
    /// start-up and the operator's commands, whose work blocks (files, a bucket's transfers, a
    /// database's migrations) and would otherwise hold the caller's thread, one of Swift's
    /// cooperative pool when the caller is a test.
    public static func onThreadOfItsOwn<T, Failure: Error>(named name: String, _ work: () async throws(Failure) -> T) async throws(Failure) -> T {
        let pool = ThreadPool(name: name, threads: 1)
        defer { pool.stop() }
        return try await withTaskExecutorPreference(pool, operation: work)
    }

    /// Runs `job` on a pool thread without waiting for it (clean-up nobody waits for); on the
    /// thread of index `thread` when given (what only that thread may touch). Returns false
    /// when the pool has stopped and the job will not run.
    @discardableResult
    public func submit(to thread: Int? = nil, _ job: @escaping @Sendable (_ thread: Int) -> Void) -> Bool {
        queue.put(job, to: thread)
    }

    /// The index of the calling thread when it is one of this pool's; nil otherwise. A pool
    /// whose threads own a resource each (a database connection) uses it to run work for its
    /// own threads in place.
    public var indexOfCurrentThread: Int? {
        ThreadIdentity.current.flatMap { $0.pool == ObjectIdentifier(queue) ? $0.index : nil }
    }

    /// Whether the calling thread is any pool's: one made to block (a request handler's, an
    /// I/O thread), not an event loop's or one of Swift's cooperative pool.
    public static var isCurrentThreadAPoolThread: Bool { ThreadIdentity.current != nil }

    /// Lets the threads finish what is queued and exit. Jobs submitted afterwards are refused.
    public func stop() {
        ThreadCensus.leave(ObjectIdentifier(queue))
        queue.stop()
    }

    /// Runs a task's job on a pool thread (`Task(executorPreference: pool)`); with `io`, a job
    /// enqueued by one of the pool's threads stays on it.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = queue.put({ [self] _ in job.runSynchronously(on: asUnownedTaskExecutor()) },
                                 to: keepsOwnJobs ? indexOfCurrentThread : nil)
        // A stopped pool still runs what it is given, so no task is left suspended for ever; on
        // a Dispatch thread, never in place: whoever created the task may hold a lock that the
        // task takes (a preview's making entered under its table's lock).
        if !accepted { DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) } }
    }
}

/// What a pool thread watches besides its jobs (`ThreadPool`'s `io`). Every call comes on the
/// thread it was made for.
public protocol ThreadIO: AnyObject {
    /// After each run of jobs and after each poll: does what the jobs asked (sends it) and
    /// hands out what has come.
    func turn()
    /// Before the thread sleeps: appends the descriptors to poll, and says until when it may
    /// sleep (nil: until a descriptor or a job wakes it).
    func descriptors(_ polled: inout [pollfd]) -> ContinuousClock.Instant?
    /// What poll said of the descriptors `descriptors` appended, in their order.
    func polled(_ polled: ArraySlice<pollfd>)
    /// The pool has stopped and the thread is about to end: fail what is still awaited.
    func stopped()
}

/// The pool stopped before the job could run.
public struct PoolStopped: Error, Sendable, CustomStringConvertible {
    public let pool: String
    public init(pool: String) { self.pool = pool }
    public var description: String { "the \(pool) thread pool has stopped" }
}

/// The pool's jobs: one FIFO any thread takes from, and one per thread for what only that
/// thread may run. A thread with nothing to do sleeps in poll on an eventfd of its own (and
/// its `ThreadIO`'s descriptors); a job put wakes one sleeping thread, or the thread it is for.
private final class JobQueue: Sendable {
    typealias Job = @Sendable (Int) -> Void

    private struct Jobs: ~Copyable {
        var shared = FIFO()
        var own: [FIFO]
        var sleeping: [Bool]
        var stopping = false
    }

    /// A taken job's slot is emptied at once: under steady load the queue never drains, and a
    /// kept closure would keep what it captured (a body's write batch).
    private struct FIFO {
        private var jobs: [Job?] = []
        private var head = 0
        var isEmpty: Bool { head == jobs.count }

        var count: Int { jobs.count - head }

        mutating func append(_ job: @escaping Job) { jobs.append(job) }

        mutating func take() -> Job? {
            guard head < jobs.count else { return nil }
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
            return job
        }
    }

    private let jobs: Mutex<Jobs>
    /// Each thread's wake-up descriptor.
    private let wakes: [Int32]

    init(threads: Int) {
        jobs = Mutex(Jobs(own: Array(repeating: FIFO(), count: threads), sleeping: Array(repeating: false, count: threads)))
        wakes = (0..<threads).map { _ in
            let descriptor = nt_eventfd()
            precondition(descriptor >= 0, "eventfd failed: \(errno)")
            return descriptor
        }
    }

    deinit { for descriptor in wakes { _ = Glibc.close(descriptor) } }

    /// Jobs queued and not started yet.
    var waiting: Int { jobs.withLock { jobs in jobs.own.reduce(jobs.shared.count) { $0 + $1.count } } }

    /// Queues `job` for any thread, or for thread `thread` only; false once stopping.
    func put(_ job: @escaping Job, to thread: Int? = nil) -> Bool {
        let woken = jobs.withLock { jobs -> Int?? in
            guard !jobs.stopping else { return .none }
            let sleeper: Int?
            if let thread {
                jobs.own[thread].append(job)
                sleeper = jobs.sleeping[thread] ? thread : nil
            } else {
                jobs.shared.append(job)
                sleeper = jobs.sleeping.firstIndex(of: true)
            }
            if let sleeper { jobs.sleeping[sleeper] = false }
            return .some(sleeper)
        }
        guard let woken else { return false }
        if let woken { poke(woken) }
        return true
    }

    /// Runs thread `thread`'s jobs until the queue stops and has nothing left for it.
    func serve(_ thread: Int, _ io: (any ThreadIO)?, run: (Job) -> Void) {
        var polled: [pollfd] = []
        while true {
            // A bounded run, so that what its jobs asked goes out while more keep coming.
            var ran = 0
            while ran < 64, let job = next(for: thread) {
                run(job)
                ran += 1
            }
            io?.turn()
            if ran > 0 { continue }
            polled.removeAll(keepingCapacity: true)
            polled.append(pollfd(fd: wakes[thread], events: Int16(POLLIN), revents: 0))
            let until = io?.descriptors(&polled)
            let asleep = jobs.withLock { jobs -> Bool? in
                // Asleep only with nothing queued for it (the turn may have queued some): a
                // put after this wakes it.
                guard jobs.shared.isEmpty, jobs.own[thread].isEmpty else { return false }
                if jobs.stopping { return nil }
                jobs.sleeping[thread] = true
                return true
            }
            guard let asleep else { return }
            guard asleep else { continue }
            let timeout: Int32 = until.map { at in
                let left = at - ContinuousClock.now
                return Int32(clamping: max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            } ?? -1
            _ = poll(&polled, nfds_t(polled.count), timeout)
            jobs.withLock { $0.sleeping[thread] = false }
            if polled[0].revents != 0 {
                var count: UInt64 = 0
                _ = read(wakes[thread], &count, 8)
            }
            io?.polled(polled[1...])
        }
    }

    /// The thread's own jobs first, then the shared ones.
    private func next(for thread: Int) -> Job? {
        jobs.withLock { jobs in jobs.own[thread].take() ?? jobs.shared.take() }
    }

    func stop() {
        let sleepers = jobs.withLock { jobs -> [Int] in
            jobs.stopping = true
            defer { jobs.sleeping = jobs.sleeping.map { _ in false } }
            return jobs.sleeping.indices.filter { jobs.sleeping[$0] }
        }
        for thread in sleepers { poke(thread) }
    }

    private func poke(_ thread: Int) {
        var one: UInt64 = 1
        _ = write(wakes[thread], &one, 8)
    }
}

/// Which pool thread the calling thread is (`ThreadMark`).
private final class ThreadIdentity: Sendable {
    let pool: ObjectIdentifier
    let index: Int

    init(pool: ObjectIdentifier, index: Int) {
        self.pool = pool
        self.index = index
    }

    /// Marks the calling thread as this one, for its whole life (pool threads never exit
    /// before their pool is done).
    func adopt() { Self.mark.adopt(self) }

    static var current: ThreadIdentity? { mark.current }

    private static let mark = ThreadMark<ThreadIdentity>()
}
