/// One PostgreSQL connection in libpq's pipeline mode, as a pure state machine (the shape of
/// postgres-nio's `ConnectionStateMachine` and `ExtendedQueryStateMachine`): events in
/// (a statement asked, the thread's turn to send, a result, the end of a statement's results, a
/// sync point, an error, the connection broken, a deadline, a cancel), actions out (open,
/// prepare, execute, sync, flush, answer, fail, close). It does no I/O: `ConnectionSet` does
/// what the actions say with libpq and reports what libpq gives back. `Answer` is what a
/// statement's result becomes (libpq's result in `ConnectionSet`; anything in the tests).
///
/// Everything asked between two turns is one batch, one send: each statement executed in
/// order, with one sync point at the end; a statement new to the connection is prepared just
/// before it (named once, never reused), at a sync point of its own. When a statement fails, PostgreSQL skips the rest of its batch up to the sync point.
struct PipelineMachine<Answer> {
    /// What a failure means for the statements PostgreSQL skipped behind it.
    enum Mode: Equatable {
        /// Statements of many reads, each one its own (autocommit): the skipped ones are asked
        /// again in the next batch.
        case shared
        /// One transaction's statements: a failure aborts the transaction, so the skipped ones
        /// fail with it.
        case transaction
    }

    struct Statement: Equatable {
        let id: Int
        let sql: String
    }

    enum Action {
        /// Connect; report `connected` or `connectFailed`.
        case open
        case prepare(name: String, sql: String)
        case execute(id: Int, name: String)
        case sync
        /// Send what libpq holds (and go on when the socket is writable).
        case flush
        case answer(id: Int, Answer)
        case fail(ids: [Int], PostgresError)
        /// End the connection (its socket, its prepared statements).
        case close
    }

    enum State: Equatable {
        case closed
        case opening
        case open
    }

    private enum Sent {
        case prepare(sql: String, name: String)
        case execute(Statement, name: String, sentAt: ContinuousClock.Instant)
        case sync
    }

    /// What libpq has given so far for the statement at the head of `inFlight`.
    private struct Head {
        var answer: Answer?
        var error: PostgresError?
        var skipped = false
    }

    let mode: Mode
    /// How long a statement may be out before the connection is given up as not answering.
    let deadline: Duration
    private(set) var state = State.closed
    private var waiting: [Statement] = []
    private var inFlight: [Sent] = []
    private var head = Head()
    /// Prepared statements by their SQL: their names on this connection.
    private var prepared: [String: String] = [:]
    private var named = 0
    /// Preparations that failed, by name: the statements sent with that name fail with the error.
    private var failedPreparations: [String: PostgresError] = [:]
    /// The first failure of the batch in flight (a transaction's skipped statements fail with it).
    private var batchFailure: PostgresError?
    /// Statements cancelled while in flight: their answers are dropped when they come.
    private var discarded: Set<Int> = []

    init(mode: Mode, deadline: Duration) {
        self.mode = mode
        self.deadline = deadline
    }

    /// Nothing asked, nothing out.
    var isIdle: Bool { waiting.isEmpty && inFlight.isEmpty }
    /// Statements sent and not yet answered (their sync points included).
    var inFlightCount: Int { inFlight.count }
    /// The head of what was sent is a sync point (libpq then gives a sync result, no NULL).
    var awaitsSync: Bool { if case .sync? = inFlight.first { true } else { false } }

    /// When the oldest statement out is overdue (nil: none is out).
    var nextDeadline: ContinuousClock.Instant? {
        for sent in inFlight { if case .execute(_, _, let at) = sent { return at + deadline } }
        return nil
    }

    // MARK: Events

    mutating func asked(_ statement: Statement) -> [Action] {
        waiting.append(statement)
        guard state == .closed else { return [] }
        state = .opening
        return [.open]
    }

    mutating func connected() -> [Action] {
        guard state == .opening else { return [.close] }
        state = .open
        return []
    }

    mutating func connectFailed(_ error: PostgresError) -> [Action] {
        state = .closed
        let failed = waiting.map(\.id)
        waiting = []
        return failed.isEmpty ? [] : [.fail(ids: failed, error)]
    }

    /// The loop's turn to send: what was asked since the last one goes out as one batch.
    mutating func turn(now: ContinuousClock.Instant) -> [Action] {
        guard state == .open, !waiting.isEmpty else { return [] }
        let batch = waiting
        waiting = []
        var actions: [Action] = []
        var executing = false
        for statement in batch {
            if prepared[statement.sql] == nil {
                // Prepared at a sync point of its own, just before its execution: parsing may
                // take the transaction's snapshot, so it must come after the statements asked
                // before it (a BEGIN that sets the isolation level, a COMMIT), and no failure
                // of another statement can skip it.
                if executing {
                    inFlight.append(.sync)
                    actions.append(.sync)
                    executing = false
                }
                named += 1
                let name = "s\(named)"
                prepared[statement.sql] = name
                inFlight += [.prepare(sql: statement.sql, name: name), .sync]
                actions += [.prepare(name: name, sql: statement.sql), .sync]
            }
            let name = prepared[statement.sql]!
            inFlight.append(.execute(statement, name: name, sentAt: now))
            actions.append(.execute(id: statement.id, name: name))
            executing = true
        }
        inFlight.append(.sync)
        return actions + [.sync, .flush]
    }

    /// A result of the head statement (rows, or a command's completion; a preparation's
    /// completion, which answers no one).
    mutating func received(_ answer: Answer) -> [Action] {
        guard let first = inFlight.first, !isSync(first) else { return violation("a result with no statement out") }
        head.answer = answer
        return []
    }

    /// The head statement (or preparation) failed.
    mutating func receivedError(_ error: PostgresError) -> [Action] {
        guard let first = inFlight.first, !isSync(first) else { return violation("an error with no statement out") }
        if head.error == nil { head.error = error }
        if batchFailure == nil { batchFailure = error }
        return []
    }

    /// PostgreSQL skipped the head: an earlier statement of its batch failed.
    mutating func receivedAborted() -> [Action] {
        guard let first = inFlight.first, !isSync(first) else { return violation("a skipped result with no statement out") }
        head.skipped = true
        return []
    }

    /// The head statement's results are complete (libpq's NULL after them).
    mutating func statementEnded() -> [Action] {
        guard let first = inFlight.first, !isSync(first) else { return violation("the end of a statement with none out") }
        inFlight.removeFirst()
        let outcome = head
        head = Head()
        switch first {
        case .prepare(let sql, let name):
            if let error = outcome.error {
                failedPreparations[name] = error
                prepared[sql] = nil
            } else if outcome.skipped {
                prepared[sql] = nil // never made: the next batch prepares it again
            }
            return []
        case .execute(let statement, let name, _):
            if discarded.remove(statement.id) != nil { return [] }
            if let failure = failedPreparations[name] { return [.fail(ids: [statement.id], failure)] }
            if let error = outcome.error { return [.fail(ids: [statement.id], error)] }
            if outcome.skipped {
                switch mode {
                case .shared:
                    waiting.append(statement)
                    return []
                case .transaction:
                    return [.fail(ids: [statement.id], batchFailure ?? Self.skipped)]
                }
            }
            if let answer = outcome.answer { return [.answer(id: statement.id, answer)] }
            return [.fail(ids: [statement.id], PostgresError(sqlState: "", message: "PostgreSQL gave no result"))]
        case .sync:
            return []
        }
    }

    /// The batch's sync point came back: its statements are all answered.
    mutating func syncReached() -> [Action] {
        guard case .sync? = inFlight.first else { return violation("a sync point with none out") }
        inFlight.removeFirst()
        batchFailure = nil
        // A failed preparation is remembered while statements that use it are out.
        let used = Set(inFlight.compactMap { if case .execute(_, let name, _) = $0 { name } else { nil } })
        failedPreparations = failedPreparations.filter { used.contains($0.key) }
        return []
    }

    /// The connection broke (or libpq failed to send): what is out fails; in a transaction
    /// what waits fails too (the transaction is gone), elsewhere it goes out on a new one.
    mutating func broken(_ error: PostgresError) -> [Action] {
        var failed: [Int] = []
        for sent in inFlight {
            if case .execute(let statement, _, _) = sent, discarded.remove(statement.id) == nil { failed.append(statement.id) }
        }
        if mode == .transaction {
            failed += waiting.map(\.id)
            waiting = []
        }
        inFlight = []
        head = Head()
        prepared = [:]
        failedPreparations = [:]
        batchFailure = nil
        discarded = []
        var actions: [Action] = state == .closed ? [] : [.close]
        if !failed.isEmpty { actions.append(.fail(ids: failed, error)) }
        state = .closed
        if !waiting.isEmpty {
            state = .opening
            actions.append(.open)
        }
        return actions
    }

    /// Time has passed: a statement out longer than `deadline` means PostgreSQL stopped
    /// answering; the connection is given up (and made again when next needed).
    mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        guard let due = nextDeadline, now >= due else { return [] }
        return broken(PostgresError(sqlState: "", message: "PostgreSQL did not answer within \(deadline)"))
    }

    /// The asker of `id` no longer waits (its task was cancelled): it fails at once; an answer
    /// already on its way is dropped.
    mutating func cancelled(_ id: Int) -> [Action] {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            waiting.remove(at: index)
            return [.fail(ids: [id], Self.cancelled)]
        }
        let out = inFlight.contains { if case .execute(let statement, _, _) = $0 { statement.id == id } else { false } }
        guard out, discarded.insert(id).inserted else { return [] }
        return [.fail(ids: [id], Self.cancelled)]
    }

    static var cancelled: PostgresError { PostgresError(sqlState: "57014", message: "the statement was cancelled") }
    static var skipped: PostgresError { PostgresError(sqlState: "25P02", message: "an earlier statement of the transaction failed") }

    private func isSync(_ sent: Sent) -> Bool { if case .sync = sent { true } else { false } }

    /// libpq reported something the pipeline cannot have asked for: the connection's state is
    /// unknown, so it is given up.
    private mutating func violation(_ what: String) -> [Action] {
        broken(PostgresError(sqlState: "", message: "protocol violation: \(what)"))
    }
}
