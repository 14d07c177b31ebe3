import CNTSQLite
@_exported import NTSQLKit

/// An error from SQLite, with its result code and message.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "SQLite error \(code): \(message)" }

    /// SQLITE_FULL: the disk (or the database's limit) is full.
    public var isDiskFull: Bool { code & 0xff == SQLITE_FULL }
    /// SQLITE_CONSTRAINT and its extended codes.
    public var isConstraint: Bool { code & 0xff == SQLITE_CONSTRAINT }
}

extension SQLiteError: StorageFailure {
    /// A full disk; a database busy past its timeout (asking again can work); a damaged file.
    public var storageError: StorageError {
        switch code & 0xff {
        case SQLITE_FULL: StorageError(.full, "the server's disk is full")
        case SQLITE_BUSY, SQLITE_LOCKED: StorageError(.unavailable, "the database is busy; try again shortly", detail: message)
        case SQLITE_CORRUPT, SQLITE_NOTADB: StorageError(.corrupt, description)
        default: StorageError(.failed, description)
        }
    }
}

/// SQLITE_TRANSIENT is a macro Swift cannot import: SQLite copies the bound bytes at once.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection, opened the way both the server and the client need it: WAL
/// journal (readers never wait behind the writer), `synchronous=FULL` (a commit is on disk
/// when it returns), foreign keys on, and a busy timeout instead of instant SQLITE_BUSY.
/// Prepared statements are cached by their SQL. Not thread-safe: one owner at a time.
public final class Database {
    let handle: OpaquePointer
    private var statements: [String: Prepared] = [:]

    /// A prepared statement and its column names, kept for as long as the connection.
    private struct Prepared {
        let statement: OpaquePointer
        let columns: [String]
    }

    public struct Options: Sendable {
        public var busyTimeoutMilliseconds: Int32 = 5_000
        /// A connection an event loop reads with (`NonWaitingVFS`): it never waits for the
        /// disk, a lock or a sleep, and refuses instead.
        public var readsOnAnEventLoop = false
        public init() {}
    }

    public init(path: String, options: Options = Options()) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        if options.readsOnAnEventLoop && !NonWaitingVFS.registered {
            throw SQLiteError(code: SQLITE_ERROR, message: "the \(NonWaitingVFS.name) VFS could not be registered")
        }
        let result = sqlite3_open_v2(path, &handle, flags, options.readsOnAnEventLoop ? NonWaitingVFS.name : nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: result, message: message)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, options.busyTimeoutMilliseconds)
        try enterWAL(waitingAtMost: options.busyTimeoutMilliseconds)
        try execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON")
        if options.readsOnAnEventLoop {
            // No mapped pages (a fault would wait on the disk), and a lock held elsewhere is
            // a refusal, not a wait.
            try execute("PRAGMA mmap_size=0")
            sqlite3_busy_handler(handle, NonWaitingVFS.refuseBusy, nil)
        }
    }

    deinit {
        for prepared in statements.values { sqlite3_finalize(prepared.statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without parameters (schema, pragmas, migrations).
    public func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        guard result == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: result, message: message)
        }
    }

    /// Runs one statement with bound parameters; returns the number of rows it changed.
    @discardableResult
    public func run(_ sql: String, _ arguments: any SQLBindable...) throws(SQLiteError) -> Int {
        try run(sql, arguments: arguments)
    }

    public func run(_ sql: String, arguments: [any SQLBindable]) throws(SQLiteError) -> Int {
        let statement = try prepared(sql, arguments).statement
        defer { sqlite3_reset(statement) }
        let result = sqlite3_step(statement)
        guard result == SQLITE_DONE || result == SQLITE_ROW else { throw error(result) }
        return Int(sqlite3_changes(handle))
    }

    /// Every row of a query with bound parameters.
    public func query(_ sql: String, _ arguments: any SQLBindable...) throws(SQLiteError) -> [Row] {
        try query(sql, arguments: arguments)
    }

    public func query(_ sql: String, arguments: [any SQLBindable]) throws(SQLiteError) -> [Row] {
        let prepared = try prepared(sql, arguments)
        let statement = prepared.statement
        defer { sqlite3_reset(statement) }
        let count = Int32(prepared.columns.count)
        let columns = prepared.columns
        var rows: [Row] = []
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return rows }
            guard result == SQLITE_ROW else { throw error(result) }
            rows.append(Row(columns: columns, values: (0..<count).map { column(statement, $0) }))
        }
    }

    /// The first row of a query, or nil.
    public func first(_ sql: String, _ arguments: any SQLBindable...) throws(SQLiteError) -> Row? {
        try query(sql, arguments: arguments).first
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// IMMEDIATE takes the write lock at once, so two writers never deadlock upgrading.
    @discardableResult
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Whether a transaction is open (SQLite rolls one back by itself after some errors).
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    private func prepared(_ sql: String, _ arguments: [any SQLBindable]) throws(SQLiteError) -> Prepared {
        let prepared: Prepared
        if let cached = statements[sql] {
            prepared = cached
        } else {
            var made: OpaquePointer?
            let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &made, nil)
            guard result == SQLITE_OK, let made else { throw error(result) }
            prepared = Prepared(statement: made, columns: (0..<sqlite3_column_count(made)).map { String(cString: sqlite3_column_name(made, $0)) })
            statements[sql] = prepared
        }
        let statement = prepared.statement
        sqlite3_clear_bindings(statement)
        precondition(Int(sqlite3_bind_parameter_count(statement)) == arguments.count,
                     "\(arguments.count) arguments for \(sqlite3_bind_parameter_count(statement)) parameters in \(sql)")
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch argument.sqlValue {
            case .null: result = sqlite3_bind_null(statement, index)
            case .integer(let value): result = sqlite3_bind_int64(statement, index, value)
            case .real(let value): result = sqlite3_bind_double(statement, index, value)
            case .text(var value):
                // With its byte length: a NUL inside the text is kept, not an end.
                result = value.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { text in
                        guard let base = text.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, transient) }
                        return sqlite3_bind_text(statement, index, base, Int32(text.count), transient)
                    }
                }
            case .blob(let value): result = value.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), transient) }
            }
            guard result == SQLITE_OK else { throw error(result) }
        }
        return prepared
    }

    private func column(_ statement: OpaquePointer, _ index: Int32) -> SQLValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            // The text first, then its length in bytes (SQLite's order): a NUL inside is kept.
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let base = sqlite3_column_blob(statement, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: base, count: count)))
        default: return .null
        }
    }

    private func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
    }
}
