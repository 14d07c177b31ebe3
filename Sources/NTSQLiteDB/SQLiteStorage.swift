import NTThreadPools

/// A `DatabasePool` as the `SQLStorage` a service is written against.
public struct SQLiteStorage: SQLStorage {
    public let pool: DatabasePool

    public init(_ pool: DatabasePool) {
        self.pool = pool
    }

    public var dialect: SQLDialect { .sqlite }
    public var handlerThreads: ThreadPool { pool.readerThreads }
    public var readsOnEventLoops: Bool { pool.readsOnEventLoops }
    /// A database file deleted or replaced under the daemon: every write is refused from then on.
    public var unavailableReason: String? { pool.fileProblem?.message }

    public func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await pool.read(body)
    }

    @discardableResult
    public func write<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await pool.write(body)
    }

    @discardableResult
    public func writeLazily<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await pool.write(durable: false, body)
    }

    public func stop() { pool.stop() }

    public func readOne<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await pool.readOne(body)
    }

    public func prefetch(_ query: SQLStatement) -> SQLPendingRows {
        pool.prefetch(query)
    }
}
