import NTSQLKit

/// The one blocking call of the storage: migrations at start-up and in the tools, never a
/// request's path.
extension PostgresStorage {
    /// Runs `body` with a blocking connection outside any transaction (migrations, which
    /// manage their own), blocking until done: start-up and tools only.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) throws -> T {
        try tools.runAndWait { [self] _ in
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
