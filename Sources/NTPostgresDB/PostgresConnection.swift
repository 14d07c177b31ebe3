import CNTPostgres
#if canImport(Glibc)
import Glibc
#endif
@_exported import NTSQLKit

/// An error from PostgreSQL or from reaching it, with its SQLSTATE (PostgreSQL's appendix A).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// Five characters; empty when the connection itself failed.
    public let sqlState: String
    public let message: String

    public init(sqlState: String, message: String) {
        self.sqlState = sqlState
        self.message = message
    }

    public var description: String { sqlState.isEmpty ? "PostgreSQL: \(message)" : "PostgreSQL error \(sqlState): \(message)" }

    /// The server cannot be reached, or the connection broke (class 08, 57P0x shutdowns, or
    /// no answer at all), or it is too busy (too many connections, a statement past its
    /// statement_timeout, 57014): asking again later can work.
    public var isUnavailable: Bool {
        isConnectionLost || sqlState == "53300" || sqlState == "57014"
    }

    /// The connection itself is gone (class 08, a 57P0x shutdown, no answer at all, or given up
    /// at its deadline): what ran on it may run again on a new one. A statement past its
    /// statement_timeout is not: it would take as long again.
    public var isConnectionLost: Bool {
        sqlState.isEmpty || sqlState.hasPrefix("08") || sqlState.hasPrefix("57P")
    }

    /// A transaction that lost to a concurrent one (serialization failure, deadlock) or a
    /// unique key another transaction committed first: run again, it sees the other's work.
    public var isConflict: Bool { sqlState == "40001" || sqlState == "40P01" || sqlState == "23505" }

    /// The disk is full (53100).
    public var isDiskFull: Bool { sqlState == "53100" }

    /// What libpq last said of `connection` (it failed, or broke): unavailable, no SQLSTATE.
    static func connectionFailed(_ connection: OpaquePointer?) -> PostgresError {
        PostgresError(sqlState: "", message: connection.map { String(cString: PQerrorMessage($0)).trimmingTrailingNewlines } ?? "the connection is closed")
    }
}

extension PostgresError: StorageFailure {
    /// Unreachable, restarting or too busy is `unavailable` (the daemon reconnects by itself).
    public var storageError: StorageError {
        if isUnavailable { return StorageError(.unavailable, "the database is unavailable; try again shortly", detail: message) }
        if isDiskFull { return StorageError(.full, "the database's disk is full") }
        return StorageError(.failed, "database error: \(description)")
    }
}

/// One PostgreSQL connection through libpq's blocking calls, on the thread that owns it: for
/// migrations, session locks and LISTEN, which need a session of their own (requests' reads
/// and writes go through `PipelinedConnections`).
/// Statements are written with `?` (as for SQLite) and prepared once per connection with
/// `$1…$n`; values travel as text, blobs as binary; results come back as text and are read by
/// their column's type into `SQLValue`s.
public final class PostgresConnection {
    private let url: String
    private var connection: OpaquePointer?
    /// Prepared statements by their SQL: their names on this connection.
    private var prepared: [String: String] = [:]

    /// `connectTimeoutSeconds` bounds reaching the server (libpq's `connect_timeout`) unless
    /// the URL sets it; a statement on a broken connection fails at once.
    public init(url: String, connectTimeoutSeconds: Int = 5) throws(PostgresError) {
        self.url = Self.bounded(url, connectTimeoutSeconds: connectTimeoutSeconds)
        try reconnect()
    }

    deinit { PQfinish(connection) }

    /// `url` with libpq's `connect_timeout`, unless it sets one.
    static func bounded(_ url: String, connectTimeoutSeconds: Int) -> String {
        url.contains("connect_timeout=") ? url : url + (url.contains("?") ? "&" : "?") + "connect_timeout=\(connectTimeoutSeconds)"
    }

    /// A new libpq connection to `url`, notices off.
    static func connect(url: String) throws(PostgresError) -> OpaquePointer {
        let connection = PQconnectdb(url)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let error = connection.map(PostgresError.connectionFailed) ?? PostgresError(sqlState: "", message: "out of memory")
            PQfinish(connection)
            throw error
        }
        // Notices ("already exists, skipping"; the FATAL of a session the server ends, which
        // arrives between statements) would go to stderr beside the daemon's log; what they
        // mean reaches the caller as a statement's error or a broken connection.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        return connection
    }

    private func reconnect() throws(PostgresError) {
        PQfinish(connection)
        connection = nil
        prepared = [:]
        connection = try Self.connect(url: url)
    }

    /// Connects again when the connection broke (the server restarted): the next statement
    /// then runs on a fresh one.
    public func reconnectIfBroken() throws(PostgresError) {
        if connection == nil || PQstatus(connection) != CONNECTION_OK { try reconnect() }
    }

    public var isBroken: Bool { connection == nil || PQstatus(connection) != CONNECTION_OK }

    /// Whether the server has closed this idle connection (it restarted, or ended the
    /// session): its socket is readable while no statement runs, and reading finds it closed.
    /// No round trip; for a connection that holds session state (advisory locks).
    public var closedByServer: Bool {
        guard let connection, PQstatus(connection) == CONNECTION_OK else { return true }
        var waiting = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
        guard poll(&waiting, 1, 0) > 0 else { return false }
        return PQconsumeInput(connection) == 0 || PQstatus(connection) != CONNECTION_OK
    }

    public func execute(_ sql: String) throws {
        try reconnectIfBroken()
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        try check(result)
    }

    @discardableResult
    public func run(_ sql: String, _ arguments: any SQLBindable...) throws -> Int {
        try perform(sql, arguments).changedRows
    }

    public func query(_ sql: String, arguments: [any SQLBindable]) throws -> [Row] {
        try perform(sql, arguments).allRows
    }

    public func query(_ sql: String, _ arguments: any SQLBindable...) throws -> [Row] {
        try query(sql, arguments: arguments)
    }

    public func first(_ sql: String, _ arguments: any SQLBindable...) throws -> Row? {
        try query(sql, arguments: arguments).first
    }

    func perform(_ sql: String, _ arguments: [any SQLBindable]) throws -> PostgresResult {
        try reconnectIfBroken()
        let name = try statement(sql)
        let result = PostgresResult(withParameters(arguments) { count, values, lengths, formats in
            PQexecPrepared(connection, name, count, values, lengths, formats, 0)
        })
        if let error = PostgresResult.error(of: result.pointer, connection: connection) { throw error }
        return result
    }

    /// The name of `sql` prepared on this connection, preparing it the first time.
    private func statement(_ sql: String) throws(PostgresError) -> String {
        if let name = prepared[sql] { return name }
        let name = "s\(prepared.count + 1)"
        let result = PQprepare(connection, name, Self.numbered(sql), 0, nil)
        defer { PQclear(result) }
        try check(result)
        prepared[sql] = name
        return name
    }

    private func check(_ result: OpaquePointer?) throws(PostgresError) {
        if let error = PostgresResult.error(of: result, connection: connection) { throw error }
    }

    /// Waits up to `timeoutMilliseconds` for NOTIFY messages on the channels this connection
    /// LISTENs to; returns their payloads (none: the time passed). Throws when the connection
    /// broke (the caller reconnects and LISTENs again).
    public func notifications(timeoutMilliseconds: Int32) throws(PostgresError) -> [String] {
        guard let connection, PQstatus(connection) == CONNECTION_OK else { throw .connectionFailed(nil) }
        var waiting = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
        _ = poll(&waiting, 1, timeoutMilliseconds)
        guard PQconsumeInput(connection) == 1 else { throw .connectionFailed(connection) }
        var payloads: [String] = []
        while let notify = PQnotifies(connection) {
            payloads.append(String(cString: notify.pointee.extra))
            PQfreemem(notify)
        }
        return payloads
    }

    /// `?` placeholders as `$1…$n`, outside quoted strings and identifiers.
    static func numbered(_ sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var quote: Character?
        var number = 0
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
                result.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                result.append(character)
            } else if character == "?" {
                number += 1
                result += "$\(number)"
            } else {
                result.append(character)
            }
        }
        return result
    }
}
