import NTSQLKit

/// The storage's one blocking connection: migrations at start-up and in the tools, never a
/// request's path. It runs on the tools' thread.
extension PostgresStorage {
    /// Runs `body` with a blocking connection outside any transaction (migrations, which
    /// manage their own), on the tools' thread: start-up and tools only.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await tools.run { [self] _ in
            try migrating.withLock { current in
                if let current {
                    try current.reconnectIfBroken()
                    return try body(current)
                }
                let made = try PostgresConnection(url: url)
                current = made
                return try body(made)
            }
        }
    }
}
