import SQLKit
import Synchronization
import ThreadPools

/// A pool of PostgreSQL connections as an `SQLStorage`: `size` threads, each owning one
/// connection and using libpq's blocking calls (a query is a network round trip: it waits on
/// these threads, never on an event loop or Swift's cooperative pool). Request handlers run on
/// the same threads, so a handler's reads need no thread hop, as with SQLite's readers.
///
/// Writes run `SERIALIZABLE` and are run again when they lose to a concurrent transaction
/// (serialization failure, deadlock, or a unique key committed first), for at most
/// `conflictRetrySeconds`: the stores' read-then-write logic keeps the meaning it has on
/// SQLite's single writer. A loser retries at once: the winner has already committed. Reads
/// run statement by statement (see `runRead`).
/// A connection that broke (the server restarted) is opened again on its next use.
public final class PostgresStorage: SQLStorage {
    public let threads: ThreadPool
    let connections: [Connection]
    public let conflictRetrySeconds: Double
    /// The last failure to reach the server, until a statement succeeds again.
    private let unavailable = Mutex<String?>(nil)
    /// Whether `unavailable` holds a failure: read on every statement's way, without the lock.
    private let failing = Atomic<Bool>(false)

    /// A connection owned by one thread of the pool.
    final class Connection: @unchecked Sendable {
        let url: String
        var connection: PostgresConnection?
        init(url: String) { self.url = url }

        func open() throws -> PostgresConnection {
            if let connection {
                try connection.reconnectIfBroken()
                return connection
            }
            let made = try PostgresConnection(url: url)
            connection = made
            return made
        }
    }

    /// Connections are opened on first use, so a daemon starts while the database is away and
    /// answers 503 until it is back.
    public init(url: String, size: Int, conflictRetrySeconds: Double = 10) {
        let count = max(1, size)
        connections = (0..<count).map { _ in Connection(url: url) }
        threads = ThreadPool(name: "postgres", threads: count)
        self.conflictRetrySeconds = conflictRetrySeconds
    }

    deinit { threads.stop() }

    public var dialect: SQLDialect { .postgresql }
    public var unavailableReason: String? { unavailable.withLock { $0 } }

    /// Runs `work`, recording whether the server could be reached.
    private func observed<T>(_ work: () throws -> T) throws -> T {
        do {
            let value = try work()
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
    public var handlerThreads: ThreadPool { threads }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        if let thread = threads.indexOfCurrentThread { return try runRead(thread, body) }
        return try await threads.run { [self] thread in try runRead(thread, body) }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        if let thread = threads.indexOfCurrentThread { return try runWrite(thread, body) }
        return try await threads.run { [self] thread in try runWrite(thread, body) }
    }

    func runRead<T>(_ thread: Int, _ body: (any SQLConnection) throws -> T) throws -> T {
        try observed {
            // Each statement on its own (autocommit, READ COMMITTED): one round trip where a
            // transaction would take three. A read of several statements may see a write that
            // committed between them; every reader here tolerates that (a row gone is skipped).
            let connection = try connections[thread].open()
            do {
                return try body(connection)
            } catch where connection.brokeWith(error) {
                // The server closed this connection while it was idle (it restarted): a read
                // can run again, once, on a new one.
                return try body(try connections[thread].open())
            }
        }
    }

    func runWrite<T>(_ thread: Int, _ body: (any SQLConnection) throws -> T) throws -> T {
        let deadline = ContinuousClock.now + .milliseconds(Int(conflictRetrySeconds * 1000))
        return try observed {
            while true {
                let connection = try connections[thread].open()
                do {
                    return try transaction(connection, "BEGIN ISOLATION LEVEL SERIALIZABLE", body)
                } catch let error as PostgresError where error.isConflict && ContinuousClock.now < deadline {
                    continue
                }
            }
        }
    }

    private func transaction<T>(_ connection: PostgresConnection, _ begin: String, _ body: (any SQLConnection) throws -> T) throws -> T {
        do {
            try connection.execute(begin)
        } catch where connection.brokeWith(error) {
            // The server closed this connection while it was idle (it restarted); nothing has
            // run yet: begin again on a new one (`execute` reconnects).
            try connection.execute(begin)
        }
        do {
            let value = try body(connection)
            try connection.execute("COMMIT")
            return value
        } catch {
            if !connection.isBroken { try? connection.execute("ROLLBACK") }
            throw error
        }
    }
}
