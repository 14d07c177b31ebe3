import Dispatch
import ThreadPools
import Synchronization

/// One writer and a few readers on the same WAL database, each connection on a thread of its
/// own (GRDB's `SerializedDatabase`, one per connection): callers await, they never block.
///
/// Reads wait in one queue for the next free reader thread, which runs them with its own
/// connection, so a read never waits behind a write and a burst of reads never opens extra
/// connections. The reader threads can also run the tasks that read (`readerThreads` as a
/// task executor: a server's request handlers): a read from one of them runs at once on its
/// own connection, with no thread hop. Writes run one at a time on the writer thread with group commit: the writer
/// takes every write waiting at that moment and runs them in one transaction, each inside its
/// own savepoint (a failing write rolls back alone), then commits once and resumes each caller
/// after that commit: every write is durable before its caller answers, one fsync for many.
///
/// `readBlocking` and `writeBlocking` block the calling thread: for start-up and command-line
/// tools only.
public final class DatabasePool: Sendable {
    private let writer: UncheckedDatabase
    private let readers: [UncheckedDatabase]
    private let writerThread: ThreadPool
    /// The reader threads, one per read connection.
    public let readerThreads: ThreadPool
    private let pending = Mutex<PendingWrites>(PendingWrites())
    /// The file opened: checked before each commit, and on a timer off every event loop.
    private let fileWatch: DatabaseFileWatch

    private struct PendingWrites {
        var jobs: [WriteJob] = []
        /// A drain is queued on the writer thread and has not taken the jobs yet.
        var drainQueued = false
    }

    /// `fileCheckSeconds`: how often the file is looked for between commits (a daemon that
    /// writes nothing still notices it gone).
    public init(path: String, readerCount: Int = 4, fileCheckSeconds: Int = 1) throws(SQLiteError) {
        let count = max(1, readerCount)
        writer = UncheckedDatabase(try Database(path: path))
        fileWatch = DatabaseFileWatch(try DatabaseFile(path: path), everySeconds: fileCheckSeconds)
        var made: [UncheckedDatabase] = []
        for _ in 0..<count {
            made.append(UncheckedDatabase(try Database(path: path)))
        }
        readers = made
        writerThread = ThreadPool(name: "sqlite-writer", threads: 1)
        readerThreads = ThreadPool(name: "sqlite-reader", threads: count)
    }

    deinit {
        fileWatch.stop()
        writerThread.stop()
        readerThreads.stop()
    }

    /// Why the database file is no longer the one opened, as last seen (a commit's check or the
    /// timer's): read without I/O, for a health check on an event loop.
    public var fileProblem: DatabaseFileGone? { fileWatch.lastSeen }

    /// Runs `body` with a reader of its own as soon as one is free; returns its result.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        if let thread = readerThreads.indexOfCurrentThread {
            // A task running on a reader thread: that thread's connection is free.
            return try body(readers[thread].database)
        }
        return try await readerThreads.run { [readers] thread in try body(readers[thread].database) }
    }

    /// Runs `body` in a transaction on the writer, group-committed with the writes waiting
    /// beside it; returns once that transaction is committed. Throws what `body` threw (its
    /// changes rolled back) or what the commit threw.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let value = Mutex<T?>(nil)
            enqueue(WriteJob(run: { database in
                let result = try body(database)
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

    /// `read`, blocking the calling thread until done (start-up and tools only).
    public func readBlocking<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) throws -> T {
        try readerThreads.runAndWait { [readers] thread in try body(readers[thread].database) }
    }

    /// `write`, blocking the calling thread until committed (start-up and tools only).
    @discardableResult
    public func writeBlocking<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) throws -> T {
        // The group commit runs on the writer thread; this thread only waits for its outcome.
        try writerThread.runAndWait { [self] _ in
            var outcome: Result<T, any Error> = .failure(PoolStopped(pool: "sqlite-writer"))
            let job = WriteJob(run: { database in outcome = .success(try body(database)) }, finish: { failure in
                if let failure { outcome = .failure(failure) }
            })
            runBatches([job])
            return try outcome.get()
        }
    }

    /// Runs `body` with the writer outside any transaction, blocking until done (start-up,
    /// migrations and tools, which manage their own transactions).
    public func writeNow<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) throws -> T {
        try writerThread.runAndWait { [writer] _ in try body(writer.database) }
    }

    private func enqueue(_ job: WriteJob) {
        let schedule = pending.withLock { state -> Bool in
            state.jobs.append(job)
            defer { state.drainQueued = true }
            return !state.drainQueued
        }
        guard schedule else { return }
        let accepted = writerThread.submit { [self] _ in
            let jobs = pending.withLock { state -> [WriteJob] in
                state.drainQueued = false
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return state.jobs
            }
            runBatches(jobs)
        }
        if !accepted {
            let jobs = pending.withLock { state -> [WriteJob] in
                defer { state.jobs.removeAll() }
                return state.jobs
            }
            for job in jobs { job.finish(PoolStopped(pool: "sqlite-writer")) }
        }
    }

    /// Runs jobs in as few transactions as errors allow (writer thread only).
    private func runBatches(_ jobs: [WriteJob]) {
        var jobs = jobs
        while !jobs.isEmpty {
            jobs = runBatch(jobs, writer.database)
        }
    }

    /// Runs jobs in one transaction and commits it; returns the jobs still to run when an
    /// error made SQLite roll the whole transaction back (those before it failed with it).
    private func runBatch(_ jobs: [WriteJob], _ database: Database) -> [WriteJob] {
        do {
            try database.execute("BEGIN IMMEDIATE")
        } catch {
            for job in jobs { job.finish(error) }
            return []
        }
        var failures: [ObjectIdentifier: any Error] = [:]
        for (index, job) in jobs.enumerated() {
            do {
                try database.execute("SAVEPOINT job")
                try job.run(database)
                try database.execute("RELEASE job")
            } catch {
                failures[ObjectIdentifier(job)] = error
                if database.isInTransaction {
                    try? database.execute("ROLLBACK TO job")
                    try? database.execute("RELEASE job")
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
            try database.execute("COMMIT")
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            for job in jobs { job.finish(error) }
            return []
        }
        for job in jobs { job.finish(failures[ObjectIdentifier(job)]) }
        return []
    }
}

/// A write waiting for the writer: its work, and how its caller hears the outcome (nil: it
/// was committed). Both run on the writer thread.
private final class WriteJob: @unchecked Sendable {
    let run: (Database) throws -> Void
    let finish: (_ failure: (any Error)?) -> Void

    init(run: @escaping (Database) throws -> Void, finish: @escaping ((any Error)?) -> Void) {
        self.run = run
        self.finish = finish
    }
}

/// A connection used by one thread only: the pool's thread that owns it.
private final class UncheckedDatabase: @unchecked Sendable {
    let database: Database
    init(_ database: Database) { self.database = database }
}
