import Dispatch
import Synchronization

/// One writer and a few readers on the same WAL database: reads run on any thread with a
/// reader of their own, so they never wait behind a write; writes run one at a time on the
/// writer, with group commit.
///
/// Group commit: the writer takes every write waiting at that moment and runs them in one
/// transaction, each inside its own savepoint (a failing write rolls back alone), then
/// commits once. Each caller returns only after that commit, so every write is durable
/// before its caller answers — one fsync serves many writers.
public final class DatabasePool: Sendable {
    private let writer: UncheckedDatabase
    private let writerQueue = DispatchQueue(label: "sqlite.writer")
    private let pending = Mutex<PendingWrites>(PendingWrites())
    private let readers: Mutex<[UncheckedDatabase]>
    /// Counts free readers, so a read waits for one instead of opening a connection.
    private let freeReaders: DispatchSemaphore
    private let readerCount: Int
    private let path: String

    private struct PendingWrites {
        var jobs: [WriteJob] = []
        var draining = false
    }

    public init(path: String, readerCount: Int = 4) throws(SQLiteError) {
        self.path = path
        self.readerCount = max(1, readerCount)
        writer = UncheckedDatabase(try Database(path: path))
        var made: [UncheckedDatabase] = []
        for _ in 0..<self.readerCount {
            made.append(UncheckedDatabase(try Database(path: path)))
        }
        readers = Mutex(made)
        freeReaders = DispatchSemaphore(value: self.readerCount)
    }

    /// Runs `body` with the writer outside any transaction, blocking until done (start-up,
    /// migrations and tools, which manage their own transactions).
    public func writeNow<T>(_ body: (Database) throws -> T) rethrows -> T {
        try writerQueue.sync { try body(writer.database) }
    }

    /// Runs `body` in a transaction on the writer, group-committed with the writes waiting
    /// beside it; returns once that transaction is committed. Throws what `body` threw (its
    /// changes rolled back) or what the commit threw.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        let job = WriteJob()
        var value: T?
        // The caller blocks until the job ran, so its non-escaping body outlives the run.
        withoutActuallyEscaping(body) { body in
            job.run = { database in value = try body(database) }
            pending.withLock { $0.jobs.append(job) }
            writerQueue.async { [self] in drain() }
            job.done.wait()
        }
        if let error = job.error { throw error }
        guard let value else { preconditionFailure("a write finished without a value or an error") }
        return value
    }

    /// Runs every waiting write in one transaction.
    private func drain() {
        var jobs = pending.withLock { state -> [WriteJob] in
            defer { state.jobs.removeAll(keepingCapacity: true) }
            return state.jobs
        }
        let database = writer.database
        while !jobs.isEmpty {
            jobs = runBatch(jobs, database)
        }
    }

    /// Runs jobs in one transaction and commits it; returns the jobs still to run when an
    /// error made SQLite roll the whole transaction back (those before it failed with it).
    private func runBatch(_ jobs: [WriteJob], _ database: Database) -> [WriteJob] {
        do {
            try database.execute("BEGIN IMMEDIATE")
        } catch {
            finish(jobs, failure: error)
            return []
        }
        for (index, job) in jobs.enumerated() {
            do {
                try database.execute("SAVEPOINT job")
                try job.run?(database)
                try database.execute("RELEASE job")
            } catch {
                job.error = error
                if database.isInTransaction {
                    try? database.execute("ROLLBACK TO job")
                    try? database.execute("RELEASE job")
                } else {
                    // The whole transaction is gone: the jobs before this one went with it.
                    finish(Array(jobs[..<index]), failure: error)
                    finish([job], failure: nil)
                    return Array(jobs[(index + 1)...])
                }
            }
        }
        do {
            try database.execute("COMMIT")
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            finish(jobs, failure: error)
            return []
        }
        finish(jobs, failure: nil)
        return []
    }

    private func finish(_ jobs: [WriteJob], failure: (any Error)?) {
        for job in jobs {
            if let failure { job.error = failure }
            job.run = nil
            job.done.signal()
        }
    }

    /// Runs `body` with a reader of its own: a pooled one as soon as one is free (reads are
    /// short). Only when none frees up within 50 ms — a read nested in another, or a burst —
    /// is a connection opened for this read and closed after it: the pool never grows.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        if freeReaders.wait(timeout: .now() + .milliseconds(50)) == .success {
            defer { freeReaders.signal() }
            guard let reader = readers.withLock({ $0.popLast() }) else { preconditionFailure("a free reader was counted but not pooled") }
            defer { readers.withLock { $0.append(reader) } }
            return try body(reader.database)
        }
        return try body(try Database(path: path))
    }
}

/// A write waiting for the writer. Its fields are touched by the caller before it is queued
/// and after `done`, and by the writer in between: never at the same time.
private final class WriteJob: @unchecked Sendable {
    var run: ((Database) throws -> Void)?
    var error: (any Error)?
    let done = DispatchSemaphore(value: 0)
}

/// A connection handed between threads, used by one at a time (the pool's locks see to it).
private final class UncheckedDatabase: @unchecked Sendable {
    let database: Database
    init(_ database: Database) { self.database = database }
}
