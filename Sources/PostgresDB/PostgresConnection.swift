import CPostgres
#if canImport(Glibc)
import Glibc
#endif
@_exported import SQLKit

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
    /// no answer at all): asking again later can work.
    public var isUnavailable: Bool {
        sqlState.isEmpty || sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") || sqlState == "53300"
    }

    /// A transaction that lost to a concurrent one (serialization failure, deadlock) or a
    /// unique key another transaction committed first: run again, it sees the other's work.
    public var isConflict: Bool { sqlState == "40001" || sqlState == "40P01" || sqlState == "23505" }

    /// The disk is full (53100).
    public var isDiskFull: Bool { sqlState == "53100" }
}

/// One PostgreSQL connection through libpq's blocking calls, on the thread that owns it.
/// Statements are written with `?` (as for SQLite) and prepared once per connection with
/// `$1…$n`; values travel as text, blobs as binary; results come back as text and are read by
/// their column's type into `SQLValue`s.
public final class PostgresConnection: SQLConnection {
    public var dialect: SQLDialect { .postgresql }
    private let url: String
    private var connection: OpaquePointer?
    /// Prepared statements by their SQL: their names on this connection.
    private var prepared: [String: String] = [:]

    /// `connectTimeoutSeconds` bounds reaching the server (libpq's `connect_timeout`) unless
    /// the URL sets it; a statement on a broken connection fails at once.
    public init(url: String, connectTimeoutSeconds: Int = 5) throws(PostgresError) {
        self.url = url.contains("connect_timeout=") ? url : url + (url.contains("?") ? "&" : "?") + "connect_timeout=\(connectTimeoutSeconds)"
        try connect()
    }

    deinit { PQfinish(connection) }

    private func connect() throws(PostgresError) {
        PQfinish(connection)
        prepared = [:]
        connection = PQconnectdb(url)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            throw PostgresError(sqlState: "", message: message.trimmingTrailingNewlines)
        }
        // Notices ("already exists, skipping") would go to stderr beside the daemon's log.
        PQclear(PQexec(connection, "SET client_min_messages TO warning"))
    }

    /// Connects again when the connection broke (the server restarted): the next statement
    /// then runs on a fresh one.
    public func reconnectIfBroken() throws(PostgresError) {
        if connection == nil || PQstatus(connection) != CONNECTION_OK { try connect() }
    }

    public var isBroken: Bool { connection == nil || PQstatus(connection) != CONNECTION_OK }

    /// Whether `error` is this connection having broken (the server went away), not a
    /// statement's own failure: what ran on it may run again on a new one.
    public func brokeWith(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isUnavailable == true && isBroken
    }

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

    public func run(_ sql: String, arguments: [any SQLBindable]) throws -> Int {
        try settleAhead()
        let result = try perform(sql, arguments)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    public func query(_ sql: String, arguments: [any SQLBindable]) throws -> [Row] {
        if let first = ahead, Self.isQuery(sql) {
            ahead = nil
            return try joined(first, sql, arguments)
        }
        try settleAhead()
        let result = try perform(sql, arguments)
        defer { PQclear(result) }
        return rows(result, columns: 0..<PQnfields(result))
    }

    /// The rows of `result`, of the columns in `range`.
    private func rows(_ result: OpaquePointer?, columns range: Range<Int32>) -> [Row] {
        let columns = range.map { String(cString: PQfname(result, $0)) }
        let types = range.map { PQftype(result, $0) }
        return (0..<PQntuples(result)).map { row in
            Row(columns: columns, values: zip(range, types).map { column, type in Self.value(result, row, column, type: type) })
        }
    }

    private func perform(_ sql: String, _ arguments: [any SQLBindable]) throws -> OpaquePointer? {
        try reconnectIfBroken()
        let name = try statement(sql)
        let result = withParameters(arguments) { count, values, lengths, formats in
            PQexecPrepared(connection, name, count, values, lengths, formats, 0)
        }
        do {
            try check(result)
        } catch {
            PQclear(result)
            throw error
        }
        return result
    }

    /// The query to run with the next statement, and then what it gave.
    private var ahead: SQLStatement?
    private var aheadOutcome: Result<[Row], PostgresError>?

    /// When the body's first statement is a query, `first` and it are one statement, one round
    /// trip and one execution (`joined`); before any other statement, `first` runs on its own.
    public func withQueryAhead<T>(_ first: SQLStatement, _ body: (any SQLConnection) throws -> T) throws -> (rows: [Row], result: Result<T, any Error>) {
        (ahead, aheadOutcome) = (first, nil)
        defer { (ahead, aheadOutcome) = (nil, nil) }
        let result = Result { try body(self) }
        // The connection broke under the body: that is the read's failure, not its answer (the
        // storage runs it again on a new connection).
        if case .failure(let error) = result, brokeWith(error) { throw error }
        switch aheadOutcome {
        case .success(let rows): return (rows, result)
        case .failure(let error): throw error
        case nil: // body ran no statement
            ahead = nil
            return (try query(first.sql, arguments: first.arguments), result)
        }
    }

    /// The query ahead, on its own (the statement after it is not a query): its rows recorded
    /// in `aheadOutcome`; its failure thrown.
    private func settleAhead() throws {
        guard let first = ahead else { return }
        ahead = nil
        do {
            aheadOutcome = .success(try query(first.sql, arguments: first.arguments))
        } catch let error as PostgresError {
            aheadOutcome = .failure(error)
            throw error
        }
    }

    /// The column that ends `first`'s columns in a joined row; NULL where `sql` found no row.
    private static let boundary = "nt_rows_follow"

    /// `first` (one row at most: a lookup by a unique key) and the query `sql` as one
    /// statement: each row of `sql` beside `first`'s row, or `first`'s row alone, or no row when
    /// `first` found none (then `sql` is not asked). `LEFT JOIN LATERAL ... ON true` runs as a
    /// nested loop with `first` outside, so `sql`'s rows keep their order. Measured against the
    /// two statements in one pipeline, with pgbench on this machine: 6–10 % more per second.
    /// Records `first`'s rows in `aheadOutcome`; returns `sql`'s.
    private func joined(_ first: SQLStatement, _ sql: String, _ arguments: [any SQLBindable]) throws -> [Row] {
        // Each on lines of its own: a trailing comment ends with its line.
        let statement = "SELECT ahead.*, behind.* FROM (\n\(first.sql)\n) ahead LEFT JOIN LATERAL "
            + "(SELECT 1 AS \(Self.boundary), q.* FROM (\n\(sql)\n) q) behind ON true"
        let result: OpaquePointer?
        do {
            result = try perform(statement, first.arguments + arguments)
        } catch let error as PostgresError {
            guard !brokeWith(error) else {
                aheadOutcome = .failure(error)
                throw error
            }
            // Which of the two failed? `first` alone says: its failure is thrown, else the
            // error is `sql`'s.
            ahead = first
            try settleAhead()
            throw error
        }
        defer { PQclear(result) }
        let count = PQnfields(result)
        let split = (0..<count).first { String(cString: PQfname(result, $0)) == Self.boundary } ?? count
        let aheadRows = rows(result, columns: 0..<split)
        aheadOutcome = .success(Array(aheadRows.prefix(1)))
        guard split < count, PQntuples(result) > 0, PQgetisnull(result, 0, split) == 0 else { return [] }
        return rows(result, columns: (split + 1)..<count)
    }

    /// Whether `sql` is a query that can stand as a subquery (a SELECT).
    static func isQuery(_ sql: String) -> Bool {
        let start = Array(sql.utf8.prefix(7))
        return start.count == 7 && start[0..<6].map { $0 | 0x20 }.elementsEqual("select".utf8)
            && [UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r")].contains(start[6])
    }

    /// Each parameter as text (blobs as bytes, format 1), kept alive for the call.
    private func withParameters<R>(_ arguments: [any SQLBindable],
                                   _ body: (Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) -> R) -> R {
        let values = arguments.map(\.sqlValue)
        let texts: [[CChar]?] = values.map { value in
            switch value {
            case .null: nil
            case .integer(let number): Array(String(number).utf8CString)
            case .real(let number): Array("\(number)".utf8CString)
            case .text(let text): Array(text.utf8CString)
            // An empty blob still needs a pointer: libpq reads a null one as SQL NULL.
            case .blob(let bytes): bytes.isEmpty ? [0] : bytes.map { CChar(bitPattern: $0) }
            }
        }
        let lengths = values.map { value -> Int32 in if case .blob(let bytes) = value { Int32(bytes.count) } else { 0 } }
        let formats = values.map { value -> Int32 in if case .blob = value { 1 } else { 0 } }
        return withPointers(texts) { pointers in body(Int32(values.count), pointers, lengths, formats) }
    }

    private func connectionError() -> PostgresError {
        PostgresError(sqlState: "", message: connection.map { String(cString: PQerrorMessage($0)).trimmingTrailingNewlines } ?? "the connection is closed")
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
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return }
        let sqlState = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) } ?? ""
        let message = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "M"))) }.map { String(cString: $0) }
            ?? String(cString: PQerrorMessage(connection)).trimmingTrailingNewlines
        throw PostgresError(sqlState: sqlState, message: message)
    }

    /// Waits up to `timeoutMilliseconds` for NOTIFY messages on the channels this connection
    /// LISTENs to; returns their payloads (none: the time passed). Throws when the connection
    /// broke (the caller reconnects and LISTENs again).
    public func notifications(timeoutMilliseconds: Int32) throws(PostgresError) -> [String] {
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            throw PostgresError(sqlState: "", message: "the connection is closed")
        }
        var waiting = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
        _ = poll(&waiting, 1, timeoutMilliseconds)
        guard PQconsumeInput(connection) == 1 else {
            throw PostgresError(sqlState: "", message: String(cString: PQerrorMessage(connection)).trimmingTrailingNewlines)
        }
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

    /// PostgreSQL type OIDs (pg_type.dat) read as what SQLite would have returned.
    private static func value(_ result: OpaquePointer?, _ row: Int32, _ column: Int32, type: Oid) -> SQLValue {
        guard PQgetisnull(result, row, column) == 0, let raw = PQgetvalue(result, row, column) else { return .null }
        let text = String(cString: raw)
        switch type {
        case 16: return .integer(text == "t" ? 1 : 0) // bool
        case 20, 21, 23: return Int64(text).map(SQLValue.integer) ?? .text(text) // int8, int2, int4
        case 1700: return Int64(text).map(SQLValue.integer) ?? Double(text).map(SQLValue.real) ?? .text(text) // numeric (sum)
        case 700, 701: return Double(text).map(SQLValue.real) ?? .text(text) // float4, float8
        case 17: // bytea, in its hex text form
            var length = 0
            guard let bytes = PQunescapeBytea(raw, &length) else { return .blob([]) }
            defer { PQfreemem(bytes) }
            return .blob(Array(UnsafeBufferPointer(start: bytes, count: length)))
        default: return .text(text)
        }
    }
}

/// Runs `body` with C pointers to each optional byte array (nil for SQL NULL).
private func withPointers<R>(_ arrays: [[CChar]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafePointer<CChar>?] = []
    pointers.reserveCapacity(arrays.count)
    func next(_ index: Int) -> R {
        guard index < arrays.count else { return body(pointers) }
        guard let array = arrays[index] else {
            pointers.append(nil)
            return next(index + 1)
        }
        return array.withUnsafeBufferPointer { buffer in
            pointers.append(buffer.baseAddress)
            return next(index + 1)
        }
    }
    return next(0)
}

extension String {
    var trimmingTrailingNewlines: String {
        var text = self
        while text.last == "\n" { text.removeLast() }
        return text
    }
}
