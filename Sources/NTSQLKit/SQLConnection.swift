import Synchronization
import NTThreadPools

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
/// - `readOne` is a read whose body asks one statement: one statement is one snapshot on every
///   backend, with no transaction around it (on PostgreSQL it shares the handler thread's connection with other
///   such reads, in one batch). A second statement is refused (`OneStatementOnly`).
/// - `prefetch` asks one query now and lets the caller await its rows later, after other work
///   (a request's token check, beside the route's reads).
public protocol SQLStorage: Sendable {
    var dialect: SQLDialect { get }
    /// The threads request handlers run on: a read from one of them needs no thread hop.
    var handlerThreads: ThreadPool { get }
    /// Whether a read asked on an event loop's thread runs there without waiting (a database
    /// in this process whose pages memory holds); false: it hops to `handlerThreads`.
    var readsOnEventLoops: Bool { get }
    func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T
    @discardableResult
    func write<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T
    /// A write visible to every reader when it returns, but durable only some time after: a
    /// crash may take it back whole (never part of it). For a record that something else
    /// keeps durably as well. A database that cannot tell its commits apart makes it durable.
    @discardableResult
    func writeLazily<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T
    func readOne<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T
    func prefetch(_ query: SQLStatement) -> SQLPendingRows
    /// Why the database cannot be used now, in words fit for anyone (nil: it can, as far as
    /// the last statement knows): read without I/O, for a health check.
    var unavailableReason: String? { get }
    /// Round trips to the database since the start (batches sent), for /metrics; nil for a
    /// database in this process.
    var roundTrips: Int? { get }
    /// The connections transactions borrow: how many, how many are lent, how many transactions
    /// wait for one (nil for a database in this process).
    var transactionConnections: (size: Int, lent: Int, waiting: Int)? { get }
    /// Ends the storage's threads and connections before the last reference goes (the
    /// service stopping); what is asked afterwards fails.
    func stop()
}

extension SQLStorage {
    public func writeLazily<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T { try await write(body) }
    public var readsOnEventLoops: Bool { false }
    public var unavailableReason: String? { nil }
    public var roundTrips: Int? { nil }
    public var transactionConnections: (size: Int, lent: Int, waiting: Int)? { nil }

    /// One query's rows, a read of its own.
    public func statement(_ query: SQLStatement) async throws -> [Row] {
        try await readOne { try await $0.query(query.sql, arguments: query.arguments) }
    }

    /// A database in this process answers at once: the query runs when its rows are awaited.
    public func prefetch(_ query: SQLStatement) -> SQLPendingRows {
        SQLPendingRows { try await statement(query) }
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

/// A read's body asked a second statement where it may ask one (`SQLStorage.readOne`).
public struct OneStatementOnly: Error, CustomStringConvertible {
    public let sql: String
    public var description: String { "a one-statement read asked a second statement: \(sql)" }
}

/// The connection of a one-statement read: its first call goes to `inner`, any other throws.
public final class OneStatementConnection: SQLConnection {
    private let inner: any SQLConnection
    private let asked = Mutex(false)

    public init(_ inner: any SQLConnection) { self.inner = inner }

    public var dialect: SQLDialect { inner.dialect }

    private func claim(_ sql: String) throws(OneStatementOnly) {
        guard !asked.withLock({ asked in defer { asked = true }; return asked }) else { throw OneStatementOnly(sql: sql) }
    }

    public func execute(_ sql: String) async throws {
        try claim(sql)
        try await inner.execute(sql)
    }

    public func run(_ sql: String, arguments: [any SQLBindable]) async throws -> Int {
        try claim(sql)
        return try await inner.run(sql, arguments: arguments)
    }

    public func query(_ sql: String, arguments: [any SQLBindable]) async throws -> [Row] {
        try claim(sql)
        return try await inner.query(sql, arguments: arguments)
    }

    public func queries(_ statements: [SQLStatement]) async throws -> [[Row]] {
        guard statements.count <= 1 else { throw OneStatementOnly(sql: statements[1].sql) }
        try claim(statements.first?.sql ?? "")
        return try await inner.queries(statements)
    }
}

/// A query's rows, asked and awaited later (`SQLStorage.prefetch`): either answered by the
/// storage when they come (`answer`; a read that `take`s the query runs it in its own
/// snapshot), or, when nobody took it by the time they are awaited, run then (`later`). One
/// awaiter.
public final class SQLPendingRows: Sendable {
    private let later: (@Sendable () async throws -> [Row])?
    private let state = Mutex<(result: Result<[Row], any Error>?, taken: Bool, waiter: CheckedContinuation<[Row], any Error>?)>((nil, false, nil))

    /// Rows `later` gives when they are awaited, unless a read took the query first.
    public init(later: @escaping @Sendable () async throws -> [Row]) {
        self.later = later
    }

    /// Rows the storage gives with `answer`.
    public init() {
        later = nil
    }

    /// Claims the query for a read that will run it and `answer`; false when it is answered
    /// or claimed already.
    public func take() -> Bool {
        state.withLock { state in
            guard state.result == nil, !state.taken else { return false }
            state.taken = true
            return true
        }
    }

    public func answer(_ result: Result<[Row], any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<[Row], any Error>? in
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    public func rows() async throws -> [Row] {
        if let later, take() { return try await later() }
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<[Row], any Error>? in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
