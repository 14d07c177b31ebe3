import ThreadPools

/// A `DatabasePool` as the `SQLStorage` a service is written against.
public struct SQLiteStorage: SQLStorage {
    public let pool: DatabasePool

    public init(_ pool: DatabasePool) {
        self.pool = pool
    }

    public var dialect: SQLDialect { .sqlite }
    public var handlerThreads: ThreadPool { pool.readerThreads }
    /// A database file deleted or replaced under the daemon: every write is refused from then on.
    public var unavailableReason: String? { pool.fileProblem?.message }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await pool.read { database in try body(database) }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await pool.write { database in try body(database) }
    }

    public func readBlocking<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) throws -> T {
        try pool.readBlocking { database in try body(database) }
    }

    public func writeBlocking<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) throws -> T {
        try pool.writeBlocking { database in try body(database) }
    }
}
