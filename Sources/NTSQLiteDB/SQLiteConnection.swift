import Synchronization

/// A pool's connection as the `SQLConnection` one read or write body is given. SQLite is in
/// this process: each call runs at once on the calling thread (one of the pool's). A lock
/// keeps a body's child tasks (`async let`) from stepping the connection at the same moment.
public final class SQLiteConnection: SQLConnection, @unchecked Sendable {
    private let database: Database
    /// Held for each call: `database` is touched only under it.
    private let lock = Mutex(())

    init(_ database: Database) {
        self.database = database
    }

    public var dialect: SQLDialect { .sqlite }

    /// The connection itself, for the pool's own statements (transactions, the file check).
    func withDatabase<T>(_ body: (Database) throws -> T) rethrows -> T {
        try lock.withLock { _ in try body(database) }
    }

    public func execute(_ sql: String) throws {
        try withDatabase { try $0.execute(sql) }
    }

    public func run(_ sql: String, arguments: [any SQLBindable]) throws -> Int {
        try withDatabase { try $0.run(sql, arguments: arguments) }
    }

    public func query(_ sql: String, arguments: [any SQLBindable]) throws -> [Row] {
        try withDatabase { try $0.query(sql, arguments: arguments) }
    }

    /// Each in turn: a statement here costs microseconds, not a round trip.
    public func queries(_ statements: [SQLStatement]) throws -> [[Row]] {
        try withDatabase { database in try statements.map { try database.query($0.sql, arguments: $0.arguments) } }
    }
}
