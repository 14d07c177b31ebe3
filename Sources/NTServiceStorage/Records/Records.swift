import NTMetrics
import NTServiceModel
import NTSQLiteDB
import NTThreadPools
import NTTracing

/// The rows, as the service's use cases reach them: a read of one statement, a read of one
/// snapshot, a durable write; each counted on /metrics by outcome (`toursd_database_calls`), a
/// span of a traced request, and a write's events noted for the feed's long-polls
/// (`TenantCommits`) at its commit. Its calls run on the database's own threads, never on an
/// event loop or a thread of Swift's cooperative pool.
package final class Records: Sendable {
    /// The database itself, for what runs before the service serves (migrations, the start's
    /// sweeps) and its health.
    package let pool: any SQLStorage
    /// The feed's long-polls, woken when this daemon commits a write with events of their
    /// tenant (events are written in the transaction of their change).
    package let commits = TenantCommits()
    /// Reads, writes and one-statement reads, by outcome and latency (/metrics).
    private let calls = OperationMetrics(name: "toursd_database_calls", what: "calls to the database (a transaction, or a read of one statement)")

    package init(pool: any SQLStorage) {
        self.pool = pool
    }

    /// The threads its calls run on.
    package var threads: ThreadPool { pool.handlerThreads }
    /// Whether its reads asked on an event loop run there without waiting.
    package var readsOnEventLoops: Bool { pool.readsOnEventLoops }

    /// Why the database cannot be reached now (nil: it can), as it last saw; no I/O.
    package var unavailableReason: String? { pool.unavailableReason }

    /// Writes in a transaction of its own, durable when this returns; `lazily`: visible when
    /// this returns, durable some time after (`SQLStorage.writeLazily`), for a record kept
    /// durably elsewhere as well.
    package func write<T: Sendable>(lazily: Bool = false, _ body: @escaping SQLBody<T>) async throws -> T {
        // Read here, in the request's task: the body may run on the database's own thread.
        let traceparent = Trace.current?.context.traceparent
        let noted: SQLBody<(T, Set<Int64>)> = { db in
            let noting = EventNotingConnection(db, traceparent: traceparent)
            return (try await body(noting), noting.tenants)
        }
        let (value, tenants) = try await measured("write") {
            try await lazily ? pool.writeLazily(noted) : pool.write(noted)
        }
        commits.committed(tenants)
        return value
    }

    /// A read of one statement (one snapshot, no transaction around it).
    package func readOne<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await measured("statement") { try await pool.readOne(body) }
    }

    /// Reads one committed state.
    package func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await measured("read") { try await pool.read(body) }
    }

    /// One statement's rows, counted as a read of one statement.
    package func statement(_ statement: SQLStatement) async throws -> [Row] {
        try await measured("statement") { try await pool.statement(statement) }
    }

    /// A statement asked now (on PostgreSQL, in the batch of the next read), its rows awaited later.
    package func prefetch(_ statement: SQLStatement) -> SQLPendingRows {
        pool.prefetch(statement)
    }

    /// A call to the database, counted (/metrics: "error" when the database failed, "refused"
    /// when the service refused what it read, a 404 or a conflict) and, in a traced request,
    /// its span.
    private func measured<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        try await Trace.span("database \(operation)", kind: .client) {
            try await calls.measure(operation, failure: { $0 is any StorageFailure ? "error" : "refused" }, body)
        }
    }

    /// Its lines of /metrics: its calls by kind, and where the database is across a network
    /// its round trips and the connections transactions borrow.
    package var metrics: String {
        var lines = calls.render() + commits.metrics
        if let trips = pool.roundTrips {
            lines += """
                # HELP toursd_database_round_trips_total Batches of statements sent to PostgreSQL (one send, one wait each).
                # TYPE toursd_database_round_trips_total counter
                toursd_database_round_trips_total \(trips)

                """
        }
        if let connections = pool.transactionConnections {
            lines += """
                # HELP toursd_database_transaction_connections Connections transactions borrow (databasePoolSize), by state.
                # TYPE toursd_database_transaction_connections gauge
                toursd_database_transaction_connections{state="lent"} \(connections.lent)
                toursd_database_transaction_connections{state="free"} \(connections.size - connections.lent)
                # HELP toursd_database_transactions_waiting Transactions waiting for a connection.
                # TYPE toursd_database_transactions_waiting gauge
                toursd_database_transactions_waiting \(connections.waiting)

                """
        }
        return lines
    }
}
