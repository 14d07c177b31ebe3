import Synchronization

/// A read's or a write's transaction on a connection lent to it (`PostgresStorage`), as the
/// `SQLConnection` its body is given. Its BEGIN goes out with the body's first statements (one
/// round trip, not two); each later batch is a round trip. The body's child tasks may ask at
/// the same time: the connection's thread keeps the order in which statements reach it.
final class PostgresSession: SQLConnection {
    private let connections: PipelinedConnections
    let place: PipelinedConnections.Place
    private let begin: SQLStatement
    /// Whether BEGIN has been sent (the first asker sends it).
    private let begun = Atomic<Bool>(false)

    init(_ connections: PipelinedConnections, _ place: PipelinedConnections.Place, begin: String) {
        self.connections = connections
        self.place = place
        self.begin = SQLStatement(begin)
    }

    var dialect: SQLDialect { .postgresql }
    var hasBegun: Bool { begun.load(ordering: .relaxed) }

    /// `statements`' results, BEGIN sent ahead of them if nothing was sent yet.
    private func ask(_ statements: [SQLStatement]) async throws -> [PostgresResult] {
        guard !begun.exchange(true, ordering: .relaxed) else { return try await connections.ask(place, statements) }
        return Array(try await connections.ask(place, [begin] + statements).dropFirst())
    }

    func execute(_ sql: String) async throws { _ = try await ask([SQLStatement(sql)]) }

    func run(_ sql: String, arguments: [any SQLBindable]) async throws -> Int {
        try await ask([SQLStatement(sql, arguments: arguments)])[0].changedRows
    }

    func query(_ sql: String, arguments: [any SQLBindable]) async throws -> [Row] {
        try await ask([SQLStatement(sql, arguments: arguments)])[0].allRows
    }

    func queries(_ statements: [SQLStatement]) async throws -> [[Row]] {
        guard !statements.isEmpty else { return [] }
        return try await ask(statements).map(\.allRows)
    }

    /// Ends the transaction: COMMIT and its answer (a write: durable when it returns).
    func commit() async throws {
        guard hasBegun else { return }
        _ = try await connections.ask(place, [SQLStatement("COMMIT")])
    }

    /// Ends the transaction without waiting for PostgreSQL: what the connection's next holder
    /// asks goes out behind it (a read's COMMIT, a failed transaction's ROLLBACK).
    func end(_ sql: String) {
        guard hasBegun else { return }
        connections.send(place, [SQLStatement(sql)])
    }
}

/// Statements on the connection a handler thread's one-statement reads share (the calling
/// thread's, asked at each statement), each on its own (autocommit).
final class SharedStatements: SQLConnection {
    private let connections: PipelinedConnections

    init(_ connections: PipelinedConnections) {
        self.connections = connections
    }

    var dialect: SQLDialect { .postgresql }

    private func ask(_ statements: [SQLStatement]) async throws -> [PostgresResult] {
        try await connections.ask(connections.place(0), statements)
    }

    func execute(_ sql: String) async throws { _ = try await ask([SQLStatement(sql)]) }

    func run(_ sql: String, arguments: [any SQLBindable]) async throws -> Int {
        try await ask([SQLStatement(sql, arguments: arguments)])[0].changedRows
    }

    func query(_ sql: String, arguments: [any SQLBindable]) async throws -> [Row] {
        try await ask([SQLStatement(sql, arguments: arguments)])[0].allRows
    }

    func queries(_ statements: [SQLStatement]) async throws -> [[Row]] {
        try await ask(statements).map(\.allRows)
    }
}
