import ThreadPools

/// The SQL a connection speaks, where the two databases differ (a list bound as one
/// parameter, case-insensitive ordering, the larger of two values).
public enum SQLDialect: Sendable, Equatable {
    case sqlite
    case postgresql
}

/// One connection to a database: statements with `?` parameters, every value bound. Owned by
/// one thread at a time (the storage's thread that runs the closure given it).
public protocol SQLConnection: AnyObject {
    var dialect: SQLDialect { get }
    /// One or more statements without parameters (schema, migrations).
    func execute(_ sql: String) throws
    /// One statement; the number of rows it changed.
    func run(_ sql: String, arguments: [any SQLBindable]) throws -> Int
    /// Every row of a query.
    func query(_ sql: String, arguments: [any SQLBindable]) throws -> [Row]
    /// Runs `body`, with the query `ahead` (one row at most: a lookup by a unique key) asked
    /// with body's first statement: in the same round trip where the database is across a
    /// network. Returns ahead's rows and what `body` returned or threw; throws only when
    /// `ahead` itself failed.
    func withQueryAhead<T>(_ ahead: SQLStatement, _ body: (any SQLConnection) throws -> T) throws -> (rows: [Row], result: Result<T, any Error>)
}

/// A statement with its arguments, to be run later.
public struct SQLStatement: Sendable {
    public let sql: String
    public let arguments: [any SQLBindable]

    public init(_ sql: String, _ arguments: any SQLBindable...) {
        self.sql = sql
        self.arguments = arguments
    }
}

extension SQLConnection {
    /// A database on this machine answers a statement in microseconds: `ahead` simply runs first.
    public func withQueryAhead<T>(_ ahead: SQLStatement, _ body: (any SQLConnection) throws -> T) throws -> (rows: [Row], result: Result<T, any Error>) {
        let rows = try query(ahead.sql, arguments: ahead.arguments)
        return (rows, Result { try body(self) })
    }
}

extension SQLConnection {
    @discardableResult
    public func run(_ sql: String, _ arguments: any SQLBindable...) throws -> Int {
        try run(sql, arguments: arguments)
    }

    public func query(_ sql: String, _ arguments: any SQLBindable...) throws -> [Row] {
        try query(sql, arguments: arguments)
    }

    public func first(_ sql: String, _ arguments: any SQLBindable...) throws -> Row? {
        try query(sql, arguments: arguments).first
    }
}

/// A database as a service uses it: reads and writes that callers await (never block), each
/// closure run on a thread of the storage's own with a connection of its own. A write runs in
/// a transaction that is durable when `write` returns; writes behave as if one ran at a time
/// (SQLite has one writer; PostgreSQL runs them serializable and retries a conflict).
public protocol SQLStorage: Sendable {
    var dialect: SQLDialect { get }
    /// The threads request handlers run on: a read from one of them needs no thread hop.
    var handlerThreads: ThreadPool { get }
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T
    /// `read` and `write` blocking the calling thread: start-up and command-line tools only.
    func readBlocking<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) throws -> T
    func writeBlocking<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) throws -> T
    /// Why the database cannot be reached now (nil: it can, as far as the last statement
    /// knows): read without I/O, for a health check.
    var unavailableReason: String? { get }
    /// Ends the storage's threads and connections before the last reference goes (the
    /// service stopping); what is asked afterwards fails.
    func stop()
}

extension SQLStorage {
    public var unavailableReason: String? { nil }
    /// A storage whose threads end with it (SQLite's pool, released with its service).
    public func stop() {}
}

extension SQLDialect {
    /// The statement written for this dialect, where the two differ (a list bound as one JSON
    /// parameter, case-insensitive order, the larger of two values): each a whole literal, so
    /// no statement is put together from pieces.
    public func pick(sqlite: String, postgresql: String) -> String {
        switch self {
        case .sqlite: sqlite
        case .postgresql: postgresql
        }
    }
}
