import ThreadPools

/// The SQL a connection speaks, where the two databases differ (a list bound as one
/// parameter, case-insensitive ordering, the larger of two values).
public enum SQLDialect: Sendable, Equatable {
    case sqlite
    case postgresql
}

/// A read's or a write's connection: statements with `?` parameters, every value bound. Given
/// to one read or write body for as long as it runs, and to no one else meanwhile; its calls
/// are async, since a database across a network answers in a round trip. A body awaits only
/// its own connection's statements (never another read or write: that could wait for a
/// connection it holds).
public protocol SQLConnection: AnyObject, Sendable {
    var dialect: SQLDialect { get }
    /// A statement without parameters (SQLite takes several, separated by semicolons;
    /// PostgreSQL's pipeline one).
    func execute(_ sql: String) async throws
    /// One statement; the number of rows it changed.
    func run(_ sql: String, arguments: [any SQLBindable]) async throws -> Int
    /// Every row of a query.
    func query(_ sql: String, arguments: [any SQLBindable]) async throws -> [Row]
    /// Queries that do not depend on each other, asked together: in one round trip where the
    /// database is across a network. Their rows in their order; the first failure is thrown.
    func queries(_ statements: [SQLStatement]) async throws -> [[Row]]
}

/// A statement with its arguments, to be run later.
public struct SQLStatement: Sendable {
    public let sql: String
    public let arguments: [any SQLBindable]

    public init(_ sql: String, _ arguments: any SQLBindable...) {
        self.sql = sql
        self.arguments = arguments
    }

    public init(_ sql: String, arguments: [any SQLBindable]) {
        self.sql = sql
        self.arguments = arguments
    }
}

extension SQLConnection {
    @discardableResult
    public func run(_ sql: String, _ arguments: any SQLBindable...) async throws -> Int {
        try await run(sql, arguments: arguments)
    }

    public func query(_ sql: String, _ arguments: any SQLBindable...) async throws -> [Row] {
        try await query(sql, arguments: arguments)
    }

    public func first(_ sql: String, _ arguments: any SQLBindable...) async throws -> Row? {
        try await query(sql, arguments: arguments).first
    }
}

/// The body of a read or a write: what it returns is the read's or the write's answer.
public typealias SQLBody<T> = @Sendable (any SQLConnection) async throws -> T

/// A database as a service uses it: reads and writes that callers await (never block), each
/// body given a connection of its own, on threads of the storage's own or the caller's
/// handler thread, never Swift's cooperative pool.
///
/// - A **read** sees one committed state: every statement of its body answers from the same
///   snapshot (SQLite: one read transaction on its reader connection; PostgreSQL: a
///   REPEATABLE READ, READ ONLY transaction). A write that commits while the read runs is
///   either wholly in its answer or not at all.
/// - A **write** runs in a transaction that is durable when `write` returns; writes behave as
///   if one ran at a time (SQLite has one writer; PostgreSQL runs them serializable and runs
///   one again when it lost to a concurrent one, so a body may run more than once: it changes
///   nothing outside its connection).
/// - `statement` is a read of one query: one snapshot on every backend without a transaction
///   around it (on PostgreSQL it shares a connection with other such reads, in one batch).
public protocol SQLStorage: Sendable {
    var dialect: SQLDialect { get }
    /// The threads request handlers run on: a read from one of them needs no thread hop.
    var handlerThreads: ThreadPool { get }
    func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T
    func write<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T
    func statement(_ query: SQLStatement) async throws -> [Row]
    /// Why the database cannot be reached now (nil: it can, as far as the last statement
    /// knows): read without I/O, for a health check.
    var unavailableReason: String? { get }
    /// Round trips to the database since the start (batches sent), for /metrics; nil for a
    /// database in this process.
    var roundTrips: Int? { get }
    /// Ends the storage's threads and connections before the last reference goes (the
    /// service stopping); what is asked afterwards fails.
    func stop()
}

extension SQLStorage {
    public var unavailableReason: String? { nil }
    public var roundTrips: Int? { nil }
    /// A storage whose threads end with it (SQLite's pool, released with its service).
    public func stop() {}

    /// `read`, blocking the calling thread until done: start-up and command-line tools only,
    /// from a thread that is not one of the storage's.
    public func readBlocking<T: Sendable>(_ body: @escaping SQLBody<T>) throws -> T {
        try BlockingWait.run(on: handlerThreads) { try await read(body) }
    }

    /// `write`, blocking the calling thread until committed: start-up and tools only.
    @discardableResult
    public func writeBlocking<T: Sendable>(_ body: @escaping SQLBody<T>) throws -> T {
        try BlockingWait.run(on: handlerThreads) { try await write(body) }
    }
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
