import SQLKit
import Synchronization
import ThreadPools

/// PostgreSQL as an `SQLStorage`. Reads share a few connections in libpq's pipeline mode
/// (`PostgresPipeline`): a read's body is replayed as its statements are answered
/// (`ReplayedRead`), so no thread waits out a round trip and the statements of concurrent
/// reads travel in one batch. Request handlers run on threads of their own (`handlers`, by
/// default one per core: they never block on the database). Writes run on `writers`,
/// `writerCount` threads each owning one connection and using libpq's blocking calls (a
/// transaction's statements depend on each other: it holds its connection from BEGIN to
/// COMMIT); nothing waits on an event loop or Swift's cooperative pool.
///
/// Writes run `SERIALIZABLE` and are run again when they lose to a concurrent transaction
/// (serialization failure, deadlock, or a unique key committed first), for at most
/// `conflictRetrySeconds`: the stores' read-then-write logic keeps the meaning it has on
/// SQLite's single writer. A loser retries at once: the winner has already committed. Reads
/// run statement by statement, in autocommit (see `runRead`). A connection that broke (the
/// server restarted) is opened again on its next use.
public final class PostgresStorage: SQLStorage {
    /// The threads writes (and the blocking calls of start-up and tools) run on, one connection
    /// each.
    public let writers: ThreadPool
    /// The threads request handlers run on.
    public let handlers: ThreadPool
    let connections: [Connection]
    /// The connections reads share (`read`); a read takes the next in turn.
    let pipelines: [PostgresPipeline]
    private let turn = Atomic<Int>(0)
    public let conflictRetrySeconds: Double
    /// The last failure to reach the server, until a statement succeeds again.
    private let unavailable = Mutex<String?>(nil)
    /// Whether `unavailable` holds a failure: read on every statement's way, without the lock.
    private let failing = Atomic<Bool>(false)

    /// A connection owned by one writer thread.
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
    public init(url: String, writerCount: Int, handlerCount: Int, readPipelines: Int, conflictRetrySeconds: Double = 10) {
        let count = max(1, writerCount)
        connections = (0..<count).map { _ in Connection(url: url) }
        writers = ThreadPool(name: "pg-writer", threads: count)
        handlers = ThreadPool(name: "handler", threads: handlerCount) // 0: one per core
        let bounded = PostgresConnection.bounded(url, connectTimeoutSeconds: 5)
        pipelines = (0..<max(1, readPipelines)).map { PostgresPipeline(url: bounded, name: "pg-pipeline-\($0)") }
        self.conflictRetrySeconds = conflictRetrySeconds
    }

    deinit { stop() }

    public func stop() {
        writers.stop()
        handlers.stop()
        for pipeline in pipelines { pipeline.stop() }
    }

    public var dialect: SQLDialect { .postgresql }
    public var unavailableReason: String? { unavailable.withLock { $0 } }

    /// Runs `work`, recording whether the server could be reached.
    private func observed<T>(_ work: () throws -> T) throws -> T {
        try noted(Result { try work() }).get()
    }

    /// `outcome`, after recording whether the server could be reached.
    private func noted<T>(_ outcome: Result<T, any Error>) -> Result<T, any Error> {
        switch outcome {
        case .success:
            if failing.load(ordering: .relaxed) {
                unavailable.withLock { reason in
                    reason = nil
                    failing.store(false, ordering: .relaxed)
                }
            }
        case .failure(let error as PostgresError) where error.isUnavailable:
            unavailable.withLock { reason in
                reason = error.message
                failing.store(true, ordering: .relaxed)
            }
        case .failure: break
        }
        return outcome
    }
    public var handlerThreads: ThreadPool { handlers }

    /// A read's statements go through a pipeline shared with other reads: the body is replayed
    /// as answers arrive (`ReplayedRead`), so no thread waits for PostgreSQL meanwhile.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        let pipeline = pipelines[(turn.wrappingAdd(1, ordering: .relaxed).oldValue & Int.max) % pipelines.count]
        do {
            return try noted(.success(try await ReplayedRead.run(body, answer: pipeline.answer))).get()
        } catch {
            return try noted(.failure(error)).get()
        }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        if let thread = writers.indexOfCurrentThread { return try runWrite(thread, body) }
        return try await writers.run { [self] thread in try runWrite(thread, body) }
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
