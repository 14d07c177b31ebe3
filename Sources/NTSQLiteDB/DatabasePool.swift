import Dispatch
import NTThreadPools
import Synchronization

/// One writer and a few readers on the same WAL database (GRDB's `DatabasePool`): callers
/// await, they never block.
///
/// A read takes a free reader connection (waiting, in order, while all are out) and runs its
/// body in one read transaction on it: every statement answers from the same snapshot, and a
/// read never waits behind a write. It runs on the reader threads (`readerThreads`, also the
/// task executor of a server's request handlers): a read from one of them runs in place, with
/// no thread hop.
///
/// On an event loop's thread (`EventLoopThread`), a read first runs there, on that loop's own
/// connection, reading only what memory holds (`NonWaitingVFS`): a request that reads a row the
/// page cache has answers with no thread hop. A read that would have waited (a page on the
/// disk, a lock held elsewhere) is given up, whatever it returned, and runs again on a reader
/// thread: the loop never waits on the disk.
///
/// Writes run one at a time on the writer thread with group commit: the writer takes every
/// write waiting at that moment and runs them in one transaction, each inside its own
/// savepoint (a failing write rolls back alone), then commits once and resumes each caller
/// after that commit: every write is durable before its caller answers, one fsync for many.
public final class DatabasePool: Sendable {
    private let writer: SQLiteConnection
    private let readers: [SQLiteConnection]
    /// One per event loop, by the loop's index (`loopReaderCount`).
    let loopReaders: [LoopReader]
    /// Which readers are lent: a reader thread takes its own connection when free (no lock).
    private let lent: Checkout
    private let writerThread: ThreadPool
    /// The reader threads, one per read connection.
    public let readerThreads: ThreadPool
    private let pending = Mutex<PendingWrites>(PendingWrites())
    /// The file opened: checked before each commit, and on a timer off every event loop.
    private let fileWatch: DatabaseFileWatch
    /// The planner's statistics are refreshed (`PRAGMA optimize`) after a commit at most this
    /// often; the plans do not depend on them (the indexes cover what each statement reads),
    /// but a fresh picture keeps the planner's other choices good.
    private let optimizeEvery: Duration
    private let lastOptimized = Mutex<ContinuousClock.Instant>(.now)

    private struct PendingWrites {
        var jobs: [WriteJob] = []
        /// A drain is queued on the writer thread and has not taken the jobs yet.
        var drainQueued = false
    }

    /// `fileCheckSeconds`: how often the file is looked for between commits (a daemon that
    /// writes nothing still notices it gone). `loopReaderCount`: the event loops that read in
    /// place (the server's loops; 0: none, every read runs on the reader threads).
    public init(path: String, readerCount: Int = 4, loopReaderCount: Int = 0, fileCheckSeconds: Int = 1,
                optimizeSeconds: Int = 21_600) throws(SQLiteError) {
        let count = max(1, readerCount)
        let database = try Database(path: path)
        // Each refresh reads a bounded sample of each index, whatever the table's size.
        try database.execute("PRAGMA analysis_limit = 400")
        writer = SQLiteConnection(database)
        optimizeEvery = .seconds(max(1, optimizeSeconds))
        fileWatch = DatabaseFileWatch(try DatabaseFile(path: path), everySeconds: fileCheckSeconds)
        var made: [SQLiteConnection] = []
        for _ in 0..<count {
            made.append(SQLiteConnection(try Database(path: path)))
        }
        readers = made
        var onLoops = Database.Options()
        onLoops.readsOnAnEventLoop = true
        var loopReaders: [LoopReader] = []
        for _ in 0..<max(0, loopReaderCount) {
            loopReaders.append(LoopReader(SQLiteConnection(try Database(path: path, options: onLoops))))
        }
        self.loopReaders = loopReaders
        lent = Checkout(count: count)
        writerThread = ThreadPool(name: "sqlite-writer", threads: 1)
        readerThreads = ThreadPool(name: "sqlite-reader", threads: count)
    }

    deinit { stop() }

    /// Lets the threads go once the work queued before is done, and stops watching the file;
    /// what is asked afterwards fails (`PoolStopped`). A service stopping calls it: the
    /// threads must not wait for the last reference to go.
    public func stop() {
        fileWatch.stop()
        writerThread.stop()
        readerThreads.stop()
    }

    /// Why the database file is no longer the one opened, as last seen (a commit's check or the
    /// timer's): read without I/O, for a health check on an event loop.
    public var fileProblem: DatabaseFileGone? { fileWatch.lastSeen }

    /// Runs `body` in a read transaction of a reader of its own; returns its result.
    public func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await answeringJoined { joined in try await self.onAReader { try await Self.transaction($0, joined, body) } }
    }

    /// A read of one statement on a reader: one statement is one snapshot without a
    /// transaction around it (with one when queries joined it).
    public func readOne<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await answeringJoined { joined in
            try await self.onAReader { connection in
                guard let joined else { return try await body(OneStatementConnection(connection)) }
                return try await Self.transaction(connection, joined) { try await body(OneStatementConnection($0)) }
            }
        }
    }

    /// A query asked now, answered in the snapshot of the next read on this event loop (one
    /// read of the database's shared state for both), or run on its own when awaited first.
    public func prefetch(_ query: SQLStatement) -> SQLPendingRows {
        let pending = SQLPendingRows { [self] in try await readOne { try await $0.query(query.sql, arguments: query.arguments) } }
        callingLoopsReader?.join(query, pending)
        return pending
    }

    /// `attempt` on the calling loop's own connection when it can, else on a reader thread.
    private func onAReader<T: Sendable>(_ attempt: @escaping (SQLiteConnection) async throws -> T) async throws -> T {
        if case .answered(let value) = try await onTheLoop(attempt) { return value }
        return try await onAReaderThread { [self] in
            try await lent.with(preferring: readerThreads.indexOfCurrentThread) { [readers] index in try await attempt(readers[index]) }
        }
    }

    private static func transaction<T: Sendable>(_ connection: SQLiteConnection, _ joined: JoinedQueries?, _ body: SQLBody<T>) async throws -> T {
        // Prepared once and kept, as every statement: no parse per read.
        _ = try connection.run("BEGIN", arguments: [])
        do {
            joined?.run(on: connection)
            let value = try await body(connection)
            _ = try connection.run("COMMIT", arguments: [])
            return value
        } catch {
            _ = try? connection.run("ROLLBACK", arguments: [])
            throw error
        }
    }

    /// Runs `work` on a reader thread: in place when called from one, else after a hop. A
    /// stopped pool runs the hop's job where it is, so the hop is checked (a read then fails
    /// instead of hopping again and again).
    private func onAReaderThread<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        if readerThreads.indexOfCurrentThread != nil { return try await work() }
        return try await withTaskExecutorPreference(readerThreads) {
            guard readerThreads.indexOfCurrentThread != nil else { throw PoolStopped(pool: readerThreads.name) }
            return try await work()
        }
    }

    /// Runs `body` in a transaction on the writer, group-committed with the writes waiting
    /// beside it; returns once that transaction is committed. Throws what `body` threw (its
    /// changes rolled back) or what the commit threw. `durable` false: the commit is not
    /// flushed (`synchronous=NORMAL`: the WAL is synced at its next checkpoint, or with the
    /// next durable commit), unless it shares its transaction with a durable write.
    @discardableResult
    public func write<T: Sendable>(durable: Bool = true, _ body: @escaping SQLBody<T>) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let value = Mutex<T?>(nil)
            enqueue(WriteJob(durable: durable, run: { connection in
                let result = try await body(connection)
                value.withLock { $0 = result }
            }, finish: { failure in
                if let failure {
                    continuation.resume(throwing: failure)
                } else {
                    continuation.resume(returning: value.withLock { $0! })
                }
            }))
        }
    }

    /// Refreshes the planner's statistics where SQLite finds them stale (start-up, after the
    /// migrations; then after a commit every `optimizeSeconds`).
    public func optimize() async throws {
        try await withWriter { try $0.execute("PRAGMA optimize") }
    }

    /// Runs `body` with the writer outside any transaction, on the writer's thread (start-up,
    /// migrations and tools, which manage their own transactions).
    public func withWriter<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writerThread.run { [writer] _ in
            _ = try writer.run(Self.commits(durably: true), arguments: [])
            return try writer.withDatabase(body)
        }
    }

    /// The setting a commit is flushed by (`FULL`), or left to the WAL's next sync (`NORMAL`).
    private static func commits(durably: Bool) -> String {
        durably ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"
    }

    private func enqueue(_ job: WriteJob) {
        let schedule = pending.withLock { state -> Bool in
            state.jobs.append(job)
            defer { state.drainQueued = true }
            return !state.drainQueued
        }
        guard schedule else { return }
        Task(executorPreference: writerThread) { [self] in
            let jobs = pending.withLock { state -> [WriteJob] in
                state.drainQueued = false
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return state.jobs
            }
            // A stopped pool runs the drain where it was queued: the writer is not used off
            // its thread.
            guard writerThread.indexOfCurrentThread != nil else {
                for job in jobs { job.finish(PoolStopped(pool: writerThread.name)) }
                return
            }
            var left = jobs
            while !left.isEmpty {
                left = await runBatch(left)
            }
        }
    }

    /// Runs jobs in one transaction and commits it; returns the jobs still to run when an
    /// error made SQLite roll the whole transaction back (those before it failed with it).
    /// Writer thread only; one batch at a time (one drain is queued at a time).
    private func runBatch(_ jobs: [WriteJob]) async -> [WriteJob] {
        do {
            // Durable unless every write of the batch may wait: said by each batch, so that no
            // commit depends on an earlier one having put the setting back (a statement
            // prepared once: each batch only steps it).
            _ = try writer.run(Self.commits(durably: jobs.contains { $0.durable }), arguments: [])
            try writer.execute("BEGIN IMMEDIATE")
        } catch {
            for job in jobs { job.finish(error) }
            return []
        }
        var failures: [ObjectIdentifier: any Error] = [:]
        for (index, job) in jobs.enumerated() {
            do {
                try writer.execute("SAVEPOINT job")
                try await job.run(writer)
                try writer.execute("RELEASE job")
            } catch {
                failures[ObjectIdentifier(job)] = error
                if writer.withDatabase(\.isInTransaction) {
                    try? writer.execute("ROLLBACK TO job")
                    try? writer.execute("RELEASE job")
                } else {
                    // The whole transaction is gone: the jobs before this one went with it.
                    for earlier in jobs[..<index] { earlier.finish(error) }
                    job.finish(error)
                    return Array(jobs[(index + 1)...])
                }
            }
        }
        do {
            // Committed into a file no longer at its path, the writes would be acknowledged and
            // lost: refused instead, every one.
            if let gone = fileWatch.check() { throw gone }
            try writer.execute("COMMIT")
        } catch {
            if writer.withDatabase(\.isInTransaction) { try? writer.execute("ROLLBACK") }
            for job in jobs { job.finish(error) }
            return []
        }
        for job in jobs { job.finish(failures[ObjectIdentifier(job)]) }
        let due = lastOptimized.withLock { last in
            guard ContinuousClock.now - last >= optimizeEvery else { return false }
            last = .now
            return true
        }
        if due { try? writer.execute("PRAGMA optimize") } // after the callers were answered
        return []
    }
}

/// A write waiting for the writer: its work, and how its caller hears the outcome (nil: it
/// was committed). Both run on the writer thread.
private final class WriteJob: Sendable {
    let durable: Bool
    let run: @Sendable (SQLiteConnection) async throws -> Void
    let finish: @Sendable (_ failure: (any Error)?) -> Void

    init(durable: Bool, run: @escaping @Sendable (SQLiteConnection) async throws -> Void, finish: @escaping @Sendable ((any Error)?) -> Void) {
        self.durable = durable
        self.run = run
        self.finish = finish
    }
}
