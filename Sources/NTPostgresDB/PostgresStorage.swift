import NTSQLKit
import Synchronization
import NTThreadPools

/// PostgreSQL as an `SQLStorage`, over connections in libpq's pipeline mode, each driven by
/// one thread (`PipelinedConnections`): no thread waits out a round trip, neither a handler's
/// nor one of the storage's.
///
/// - `statement` and `readOne` (one query) go through the calling handler thread's own
///   connection: every statement its jobs ask in one run goes out in one batch (a GET's token
///   check and its read), autocommit (a single statement is one snapshot), and the answer
///   resumes the asker on that thread, with no hand-over.
/// - `read` and `write` borrow a connection of their own (`transactionConnections`, on a
///   thread of their own) for their transaction, from BEGIN to COMMIT: a read runs REPEATABLE
///   READ, READ ONLY (one snapshot for all its statements; its COMMIT is sent without
///   waiting), a write SERIALIZABLE, and is run again when it loses to a concurrent
///   transaction (serialization failure, deadlock, or a unique key committed first), for at
///   most `conflictRetrySeconds`: the stores' read-then-write logic keeps the meaning it has
///   on SQLite's single writer.
/// - A connection that broke (the server restarted; a statement unanswered past its deadline)
///   is made again on its next use; a read, or a write that had not reached COMMIT, whose
///   connection broke runs once more on the new one.
public final class PostgresStorage: SQLStorage {
    /// The threads request handlers run on, each with the connection its one-statement reads
    /// share.
    private let shared: PipelinedConnections
    /// The connections transactions borrow, on a thread of their own.
    private let lending: PipelinedConnections
    private let lent: Checkout
    private let batches = Counter()
    public let conflictRetrySeconds: Double
    /// Whether the last statement found the server away, until one succeeds again (the
    /// failure's own words, its address among them, are the log's).
    private let failing = Atomic<Bool>(false)
    /// How often the server is asked while it cannot be reached (`probe`).
    private let probeSeconds: Int
    private let stopped = Atomic<Bool>(false)
    /// The blocking connection of migrations (`withConnection`), opened when first needed.
    let migrating: Mutex<PostgresConnection?>
    let url: String
    let tools: ThreadPool

    /// Connections are opened on first use, so a daemon starts while the database is away and
    /// answers 503 until it is back. `handlerCount` 0: one handler thread per core.
    /// `probeSeconds`: how often it asks the server, while it cannot reach it, whether it is back.
    public init(url: String, transactionConnections: Int, handlerCount: Int,
                statementTimeoutSeconds: Int = 30, conflictRetrySeconds: Double = 10, probeSeconds: Int = 1) {
        let bounded = PostgresConnection.bounded(url, connectTimeoutSeconds: 5)
        let lentCount = max(1, transactionConnections)
        shared = PipelinedConnections(url: bounded, name: "handler", threadCount: handlerCount, modes: [.shared],
                                      statementTimeoutSeconds: statementTimeoutSeconds, batches: batches)
        lending = PipelinedConnections(url: bounded, name: "pg-io", threadCount: 1, modes: Array(repeating: .transaction, count: lentCount),
                                       statementTimeoutSeconds: statementTimeoutSeconds, batches: batches)
        lent = Checkout(count: lentCount)
        tools = ThreadPool(name: "pg-tools", threads: 1)
        migrating = Mutex(nil)
        self.url = url
        self.conflictRetrySeconds = conflictRetrySeconds
        self.probeSeconds = max(1, probeSeconds)
    }

    deinit { stop() }

    public func stop() {
        stopped.store(true, ordering: .relaxed)
        shared.stop()
        lending.stop()
        tools.stop()
    }

    public var dialect: SQLDialect { .postgresql }
    public var unavailableReason: String? { failing.load(ordering: .relaxed) ? "the database is unavailable" : nil }
    public var handlerThreads: ThreadPool { shared.threads }
    public var roundTrips: Int? { batches.value }
    public var transactionConnections: (size: Int, lent: Int, waiting: Int)? { (lent.count, lent.lent, lent.waitingHolders) }

    /// Bodies run on the storage's handler threads whoever calls: a transaction holds its
    /// connection while its body runs, so the body must not wait behind a busy executor of the
    /// caller's (the file pool, Swift's cooperative threads).
    private func onHandlers<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        guard handlerThreads.indexOfCurrentThread == nil else { return try await work() }
        return try await withTaskExecutorPreference(handlerThreads) { try await work() }
    }

    public func readOne<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await onHandlers { try await self.noted {
            try await self.once {
                try await body(OneStatementConnection(SharedStatements(self.shared)))
            }
        } }
    }

    /// Asked on a handler thread, it goes out with what the thread's jobs ask in the same run
    /// (the route's first read), in one batch, on the thread's shared connection. An identical
    /// prefetch asked there before it and not sent yet answers both (the same token's check
    /// for several requests): one execution, sent after both were asked.
    public func prefetch(_ query: SQLStatement) -> SQLPendingRows {
        let pending = SQLPendingRows()
        shared.sendJoining(shared.place(0), query) { result in pending.answer(result.map(\.allRows).mapError { $0 }) }
        return pending
    }

    public func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await onHandlers { try await self.noted { try await self.once { try await self.readTransaction(body) } } }
    }

    private func readTransaction<T: Sendable>(_ body: SQLBody<T>) async throws -> T {
        try await lent.with { lent in
            let session = PostgresSession(lending, .init(thread: 0, connection: lent), begin: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            do {
                let value = try await body(session)
                session.end("COMMIT")
                return value
            } catch {
                session.end("ROLLBACK")
                throw error
            }
        }
    }

    @discardableResult
    public func write<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await onHandlers { try await self.noted { try await self.writeTransaction(body) } }
    }

    private func writeTransaction<T: Sendable>(_ body: SQLBody<T>) async throws -> T {
        // From the first try on a connection: waiting for one is not losing to a conflict.
        var deadline: ContinuousClock.Instant?
        var brokeBefore = false
        while true {
            var committing = false
            do {
                return try await lent.with { lent in
                    if deadline == nil { deadline = .now + .milliseconds(Int(conflictRetrySeconds * 1000)) }
                    let session = PostgresSession(lending, .init(thread: 0, connection: lent), begin: "BEGIN ISOLATION LEVEL SERIALIZABLE")
                    do {
                        let value = try await body(session)
                        committing = true
                        try await session.commit()
                        return value
                    } catch {
                        session.end("ROLLBACK")
                        throw error
                    }
                }
            } catch let error as PostgresError where error.isConflict && ContinuousClock.now < deadline ?? .now {
                continue
            } catch let error as PostgresError where error.isConnectionLost && !committing && !brokeBefore {
                // Nothing was committed: run once more on a new connection.
                brokeBefore = true
                continue
            }
        }
    }

    /// `work`, run once more when the connection broke under it (a read has no effect).
    private func once<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch let error as PostgresError where error.isConnectionLost {
            return try await work()
        }
    }

    /// `work`'s outcome, after recording whether the server could be reached.
    private func noted<T>(_ work: () async throws -> T) async throws -> T {
        do {
            let value = try await work()
            if failing.load(ordering: .relaxed) { failing.store(false, ordering: .relaxed) }
            return value
        } catch let error as PostgresError where error.isUnavailable {
            if failing.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged { probe() }
            throw error
        }
    }

    /// Asks the server every `probeSeconds` until it answers, so that a daemon no request
    /// reaches meanwhile (a balancer took it out on its 503s) says it is back by itself.
    private func probe() {
        Task(executorPreference: shared.threads) { [self] in
            while failing.load(ordering: .relaxed), !stopped.load(ordering: .relaxed) {
                try? await Task.sleep(for: .seconds(probeSeconds))
                try? await readOne { _ = try await $0.query("SELECT 1") }
            }
        }
    }
}
