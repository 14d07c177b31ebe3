/// How statements reach PostgreSQL, shared by a blocking connection and a read replayed over a
/// pipeline (`ReplayedRead`): each runs one statement its own way (`perform`); both join the
/// query ahead of a body's first statement the same way.
protocol PostgresStatements: SQLConnection {
    /// Runs one statement, prepared once per connection; throws its failure.
    func perform(_ sql: String, _ arguments: [any SQLBindable]) throws -> PostgresResult
    /// Whether `error` ends the work on this connection rather than being a statement's own
    /// failure (the connection broke; a replayed read has a statement to ask).
    func interrupts(_ error: any Error) -> Bool
    var ahead: QueryAhead { get set }
}

/// The query to run with a body's next statement (`withQueryAhead`), and then what it gave.
struct QueryAhead {
    var statement: SQLStatement?
    var outcome: Result<[Row], PostgresError>?
}

extension PostgresStatements {
    func runSettlingAhead(_ sql: String, _ arguments: [any SQLBindable]) throws -> Int {
        try settleAhead()
        return try perform(sql, arguments).changedRows
    }

    func queryJoiningAhead(_ sql: String, _ arguments: [any SQLBindable]) throws -> [Row] {
        if let first = ahead.statement, PostgresConnection.isQuery(sql) {
            ahead.statement = nil
            return try joined(first, sql, arguments)
        }
        try settleAhead()
        return try perform(sql, arguments).allRows
    }

    /// When the body's first statement is a query, `first` and it are one statement, one round
    /// trip and one execution (`joined`); before any other statement, `first` runs on its own.
    func runWithAhead<T>(_ first: SQLStatement, _ body: (any SQLConnection) throws -> T) throws -> (rows: [Row], result: Result<T, any Error>) {
        ahead = QueryAhead(statement: first)
        defer { ahead = QueryAhead() }
        let result = Result { try body(self) }
        // The connection broke under the body: that is the read's failure, not its answer (the
        // storage runs it again on a new connection).
        if case .failure(let error) = result, interrupts(error) { throw error }
        switch ahead.outcome {
        case .success(let rows): return (rows, result)
        case .failure(let error): throw error
        case nil: // body ran no statement
            ahead.statement = nil
            return (try perform(first.sql, first.arguments).allRows, result)
        }
    }

    /// The query ahead, on its own (the statement after it is not a query): its rows recorded
    /// in `ahead.outcome`; its failure thrown.
    private func settleAhead() throws {
        guard let first = ahead.statement else { return }
        ahead.statement = nil
        do {
            ahead.outcome = .success(try perform(first.sql, first.arguments).allRows)
        } catch let error as PostgresError {
            ahead.outcome = .failure(error)
            throw error
        }
    }

    /// `first` (one row at most: a lookup by a unique key) and the query `sql` as one
    /// statement: each row of `sql` beside `first`'s row, or `first`'s row alone, or no row when
    /// `first` found none (then `sql` is not asked). `LEFT JOIN LATERAL ... ON true` runs as a
    /// nested loop with `first` outside, so `sql`'s rows keep their order. Measured against the
    /// two statements in one pipeline, with pgbench on this machine: 6–10 % more per second.
    /// Records `first`'s rows in `ahead.outcome`; returns `sql`'s.
    private func joined(_ first: SQLStatement, _ sql: String, _ arguments: [any SQLBindable]) throws -> [Row] {
        // Each on lines of its own: a trailing comment ends with its line.
        let statement = "SELECT ahead.*, behind.* FROM (\n\(first.sql)\n) ahead LEFT JOIN LATERAL "
            + "(SELECT 1 AS \(joinedBoundary), q.* FROM (\n\(sql)\n) q) behind ON true"
        let result: PostgresResult
        do {
            result = try perform(statement, first.arguments + arguments)
        } catch let error as PostgresError {
            guard !interrupts(error) else {
                ahead.outcome = .failure(error)
                throw error
            }
            // Which of the two failed? `first` alone says: its failure is thrown, else the
            // error is `sql`'s.
            ahead.statement = first
            try settleAhead()
            throw error
        }
        let count = result.columnCount
        let split = (0..<count).first { result.columnName($0) == joinedBoundary } ?? count
        ahead.outcome = .success(Array(result.rows(columns: 0..<split).prefix(1)))
        guard split < count, result.rowCount > 0, !result.isNull(0, split) else { return [] }
        return result.rows(columns: (split + 1)..<count)
    }
}

/// The column that ends the query ahead's columns in a joined row; NULL where the body's query
/// found no row.
private let joinedBoundary = "nt_rows_follow"
