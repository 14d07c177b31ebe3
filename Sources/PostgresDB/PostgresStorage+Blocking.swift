import SQLKit

/// The calls that block their caller until a writer thread has run them: start-up, migrations
/// and the command-line tools only, never a request's path.
extension PostgresStorage {
    public func readBlocking<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) throws -> T {
        try writers.runAndWait { [self] thread in try runRead(thread, body) }
    }

    public func writeBlocking<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) throws -> T {
        try writers.runAndWait { [self] thread in try runWrite(thread, body) }
    }

    /// Runs `body` with this thread's connection outside any transaction (migrations, which
    /// manage their own), blocking until done: start-up and tools only.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) throws -> T {
        try writers.runAndWait { [connections] thread in try body(try connections[thread].open()) }
    }
}
