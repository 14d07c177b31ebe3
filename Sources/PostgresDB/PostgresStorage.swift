import SQLKit
import Synchronization
import ThreadPools

/// PostgreSQL as an `SQLStorage`, over connections in libpq's pipeline mode driven by one
/// loop thread (`PostgresLoop`): no thread waits out a round trip, neither a handler's nor one
/// of the storage's.
///
/// - `statement` (one query) goes through a connection many reads share: every query asked
///   while the loop is busy goes out in its next batch, autocommit (a single statement is one
///   snapshot).
/// - `read` and `write` borrow a connection of their own (`transactionConnections`) for their
///   transaction, from BEGIN to COMMIT: a read runs REPEATABLE READ, READ ONLY (one snapshot
///   for all its statements; its COMMIT is sent without waiting), a write SERIALIZABLE, and is
///   run again when it loses to a concurrent transaction (serialization failure, deadlock, or
///   a unique key committed first), for at most `conflictRetrySeconds`: the stores'
///   read-then-write logic keeps the meaning it has on SQLite's single writer.
/// - A connection that broke (the server restarted; a statement unanswered past its deadline)
///   is made again on its next use; a read, or a write that had not reached COMMIT, whose
///   connection broke runs once more on the new one.
public final class PostgresStorage: SQLStorage {
    /// The threads request handlers run on.
    public let handlers: ThreadPool
    private let loop: PostgresLoop
    private let shared: [Int]
    private let lent: Checkout
    /// The first lent connection's index in the loop (the shared ones come first).
    private let firstLent: Int
    private let turn = Atomic<Int>(0)
    public let conflictRetrySeconds: Double
    /// The last failure to reach the server, until a statement succeeds again.
    private let unavailable = Mutex<String?>(nil)
    /// Whether `unavailable` holds a failure: read on every statement's way, without the lock.
    private let failing = Atomic<Bool>(false)
    /// The blocking connection of migrations (`withConnection`), opened when first needed.
    let migrating: Mutex<PostgresConnection?>
    let url: String
    let tools: ThreadPool

    /// Connections are opened on first use, so a daemon starts while the database is away and
    /// answers 503 until it is back.
    public init(url: String, transactionConnections: Int, handlerCount: Int, sharedConnections: Int,
                statementTimeoutSeconds: Int = 30, conflictRetrySeconds: Double = 10) {
        let bounded = PostgresConnection.bounded(url, connectTimeoutSeconds: 5)
        let sharedCount = max(1, sharedConnections)
        let lentCount = max(1, transactionConnections)
        loop = PostgresLoop(url: bounded, name: "pg-io",
                            modes: Array(repeating: .shared, count: sharedCount) + Array(repeating: .transaction, count: lentCount),
                            statementTimeoutSeconds: statementTimeoutSeconds)
        shared = Array(0..<sharedCount)
        lent = Checkout(count: lentCount)
        firstLent = sharedCount
        handlers = ThreadPool(name: "handler", threads: handlerCount) // 0: one per core
        tools = ThreadPool(name: "pg-tools", threads: 1)
        migrating = Mutex(nil)
        self.url = url
        self.conflictRetrySeconds = conflictRetrySeconds
    }

    deinit { stop() }

    public func stop() {
        loop.stop()
        handlers.stop()
        tools.stop()
    }

    public var dialect: SQLDialect { .postgresql }
    public var unavailableReason: String? { unavailable.withLock { $0 } }
    public var handlerThreads: ThreadPool { handlers }
    public var roundTrips: Int? { loop.batchesSent }

    /// The shared connection the next one-statement read goes to, in turn.
    private var nextShared: Int { shared[(turn.wrappingAdd(1, ordering: .relaxed).oldValue & Int.max) % shared.count] }

    /// Bodies run on the storage's handler threads whoever calls: a transaction holds its
    /// connection while its body runs, so the body must not wait behind a busy executor of the
    /// caller's (the file pool, Swift's cooperative threads).
    private func onHandlers<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        guard handlers.indexOfCurrentThread == nil else { return try await work() }
        return try await withTaskExecutorPreference(handlers) { try await work() }
    }

    public func readOne<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await onHandlers { try await self.noted {
            try await self.once {
                try await body(OneStatementConnection(SharedStatements(loop: self.loop, connection: self.nextShared)))
            }
        } }
    }

    /// Handed to a shared connection quietly: it goes out with the statement asked next (the
    /// route's first read), in one batch, or when its rows are awaited, whichever comes first.
    public func prefetch(_ query: SQLStatement) -> SQLPendingRows {
        let pending = SQLPendingRows(whenAwaited: { [loop] in loop.wakeUp() })
        loop.send(nextShared, [query], quietly: true) { results in pending.answer(results[0].map(\.allRows).mapError { $0 }) }
        return pending
    }

    public func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await onHandlers { try await self.noted { try await self.once { try await self.readTransaction(body) } } }
    }

    private func readTransaction<T: Sendable>(_ body: SQLBody<T>) async throws -> T {
        try await lent.with { lent in
            let session = PostgresSession(loop: loop, connection: firstLent + lent, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
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
                    let session = PostgresSession(loop: loop, connection: firstLent + lent, begin: "BEGIN ISOLATION LEVEL SERIALIZABLE")
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
            if failing.load(ordering: .relaxed) {
                unavailable.withLock { reason in
                    reason = nil
                    failing.store(false, ordering: .relaxed)
                }
            }
            return value
        } catch let error as PostgresError where error.isUnavailable {
            unavailable.withLock { reason in
                reason = error.message
                failing.store(true, ordering: .relaxed)
            }
            throw error
        }
    }
}
