/// A read's synchronous body run without a thread waiting on the network: the body runs against
/// the answers it has so far; at its first statement without one it stops (`Unanswered`), the
/// statement is asked of a pipeline (`await`), and the body runs again from the start with one
/// answer more, until it returns. A read's body is a function of what its statements return
/// (the stores' reads are), so running it again changes nothing but the time, which is small
/// beside a round trip: its statements' rows are read from each result once.
struct ReplayedRead {
    /// A body asks at most this many statements (a body that differs from run to run could
    /// otherwise ask for ever).
    static let statementLimit = 10_000

    private var answers: [ReplayedConnection.Answer] = []
    private var asked = 0

    /// Runs `body` to its end, asking `answer` for each statement it reaches; a statement that
    /// failed because the connection broke makes the whole read run again once.
    static func run<T>(_ body: (any SQLConnection) throws -> T,
                       answer: (String, [any SQLBindable]) async throws(PostgresError) -> PostgresResult) async throws -> T {
        var read = ReplayedRead()
        var again = true
        while true {
            let connection = ReplayedConnection(read.answers)
            let outcome = Result { try body(connection) }
            guard let next = connection.unanswered else {
                if connection.sawBrokenConnection, again {
                    again = false
                    read.answers = []
                    continue
                }
                return try outcome.get()
            }
            read.asked += 1
            guard read.asked <= statementLimit else {
                throw PostgresError(sqlState: "54000", message: "a read asked more than \(statementLimit) statements")
            }
            let result: Result<PostgresResult, PostgresError>
            do {
                result = .success(try await answer(next.sql, next.arguments))
            } catch {
                result = .failure(error)
            }
            read.answers.removeSubrange(next.index...)
            read.answers.append(ReplayedConnection.Answer(sql: next.sql, result: result))
        }
    }
}

/// The connection a replayed body sees: the statements it has answers for return them (the
/// same SQL in the same place); the first other statement is recorded and every statement from
/// there on throws `Unanswered`, whatever the body does with that error.
final class ReplayedConnection: PostgresStatements {
    struct Answer {
        let sql: String
        let result: Result<PostgresResult, PostgresError>
    }

    /// The first statement without an answer, and its place among the body's statements.
    struct Statement {
        let index: Int
        let sql: String
        let arguments: [any SQLBindable]
    }

    /// Thrown at a statement without an answer.
    struct Unanswered: Error {}

    private let answers: [Answer]
    private var next = 0
    private(set) var unanswered: Statement?
    /// An answer given to the body was a broken connection's failure.
    private(set) var sawBrokenConnection = false
    var ahead = QueryAhead()

    init(_ answers: [Answer]) { self.answers = answers }

    var dialect: SQLDialect { .postgresql }

    func perform(_ sql: String, _ arguments: [any SQLBindable]) throws -> PostgresResult {
        guard unanswered == nil, next < answers.count, answers[next].sql == sql else {
            if unanswered == nil { unanswered = Statement(index: next, sql: sql, arguments: arguments) }
            throw Unanswered()
        }
        let answer = answers[next].result
        next += 1
        if case .failure(let error) = answer, error.isUnavailable { sawBrokenConnection = true }
        return try answer.get()
    }

    /// A statement to ask, or a broken connection: the read's end, not the body's answer.
    func interrupts(_ error: any Error) -> Bool {
        error is Unanswered || unanswered != nil || (error as? PostgresError)?.isUnavailable == true
    }

    func execute(_ sql: String) throws { _ = try perform(sql, []) }

    func run(_ sql: String, arguments: [any SQLBindable]) throws -> Int {
        try runSettlingAhead(sql, arguments)
    }

    func query(_ sql: String, arguments: [any SQLBindable]) throws -> [Row] {
        try queryJoiningAhead(sql, arguments)
    }

    func withQueryAhead<T>(_ first: SQLStatement, _ body: (any SQLConnection) throws -> T) throws -> (rows: [Row], result: Result<T, any Error>) {
        try runWithAhead(first, body)
    }
}
