import Testing
@testable import NTPostgresDB

/// The pipeline's state machine without a server: each event in each state, and the actions
/// it answers with.
@Suite struct PipelineMachineTests {
    typealias Machine = PipelineMachine<String>
    let start = ContinuousClock.now

    /// The actions' short names, for comparing whole sequences.
    func names(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .open: "open"
            case .prepare(let name, _): "prepare \(name)"
            case .execute(let id, let name): "execute \(id) \(name)"
            case .sync: "sync"
            case .flush: "flush"
            case .answer(let id, let answer): "answer \(id) \(answer)"
            case .fail(let ids, let error): "fail \(ids) \(error.sqlState)"
            case .close: "close"
            }
        }
    }

    func open(_ mode: Machine.Mode = .shared) -> Machine {
        var machine = Machine(mode: mode, deadline: .seconds(5))
        _ = machine.asked(.init(id: 0, sql: "SELECT 0"))
        _ = machine.connected()
        _ = machine.turn(now: start)
        for event in ["prepared", "end", "sync", "result", "end", "sync"] { _ = feed(&machine, event) }
        #expect(machine.isIdle && machine.state == .open)
        return machine
    }

    /// One of libpq's reports by a short name.
    @discardableResult
    func feed(_ machine: inout Machine, _ event: String) -> [String] {
        switch event {
        case "prepared", "result": names(machine.received(event))
        case "end": names(machine.statementEnded())
        case "sync": names(machine.syncReached())
        case "aborted": names(machine.receivedAborted())
        case "error": names(machine.receivedError(PostgresError(sqlState: "22012", message: "division by zero")))
        default: preconditionFailure(event)
        }
    }

    @Test func aStatementOnAClosedConnectionOpensItAndGoesOutOnceOpen() {
        var machine = Machine(mode: .shared, deadline: .seconds(5))
        #expect(names(machine.asked(.init(id: 1, sql: "SELECT 1"))) == ["open"])
        #expect(names(machine.asked(.init(id: 2, sql: "SELECT 1"))) == []) // already opening
        #expect(names(machine.turn(now: start)) == []) // nothing goes out before it is open
        #expect(names(machine.connected()) == [])
        #expect(names(machine.turn(now: start)) == ["prepare s1", "sync", "execute 1 s1", "execute 2 s1", "sync", "flush"])
        #expect(feed(&machine, "prepared") == [] && feed(&machine, "end") == [] && feed(&machine, "sync") == [])
        #expect(feed(&machine, "result") == [] && feed(&machine, "end") == ["answer 1 result"])
        #expect(feed(&machine, "result") == [] && feed(&machine, "end") == ["answer 2 result"])
        #expect(feed(&machine, "sync") == [] && machine.isIdle)
        // Prepared once: the next batch executes it at once.
        _ = machine.asked(.init(id: 3, sql: "SELECT 1"))
        #expect(names(machine.turn(now: start)) == ["execute 3 s1", "sync", "flush"])
    }

    @Test func aFailedConnectFailsWhatWaitsAndTheNextAskOpensAgain() {
        var machine = Machine(mode: .shared, deadline: .seconds(5))
        _ = machine.asked(.init(id: 1, sql: "SELECT 1"))
        #expect(names(machine.connectFailed(PostgresError(sqlState: "", message: "refused"))) == ["fail [1] "])
        #expect(machine.state == .closed)
        #expect(names(machine.asked(.init(id: 2, sql: "SELECT 1"))) == ["open"])
    }

    /// A new statement is prepared just before its execution, after the statements asked
    /// before it (a BEGIN, a COMMIT), never ahead of them.
    @Test func aPreparationComesAfterTheStatementsAskedBeforeIt() {
        var machine = open(.transaction)
        _ = machine.asked(.init(id: 1, sql: "SELECT 0"))
        _ = machine.asked(.init(id: 2, sql: "SELECT 2"))
        #expect(names(machine.turn(now: start)) == ["execute 1 s1", "sync", "prepare s2", "sync", "execute 2 s2", "sync", "flush"])
    }

    /// Shared: a failure fails its statement alone; the ones PostgreSQL skipped behind it go
    /// out again in the next batch.
    @Test func onASharedConnectionSkippedStatementsAreAskedAgain() {
        var machine = open(.shared)
        for id in 1...3 { _ = machine.asked(.init(id: id, sql: "SELECT 0")) }
        _ = machine.turn(now: start)
        #expect(feed(&machine, "result") == [] && feed(&machine, "end") == ["answer 1 result"])
        #expect(feed(&machine, "error") == [] && feed(&machine, "end") == ["fail [2] 22012"])
        #expect(feed(&machine, "aborted") == [] && feed(&machine, "end") == [])
        #expect(feed(&machine, "sync") == [])
        #expect(names(machine.turn(now: start)) == ["execute 3 s1", "sync", "flush"])
    }

    /// A transaction: the skipped statements fail with the failure that aborted it.
    @Test func inATransactionSkippedStatementsFailWithTheBatchsFailure() {
        var machine = open(.transaction)
        for id in 1...3 { _ = machine.asked(.init(id: id, sql: "SELECT 0")) }
        _ = machine.turn(now: start)
        #expect(feed(&machine, "error") == [] && feed(&machine, "end") == ["fail [1] 22012"])
        #expect(feed(&machine, "aborted") == [] && feed(&machine, "end") == ["fail [2] 22012"])
        #expect(feed(&machine, "aborted") == [] && feed(&machine, "end") == ["fail [3] 22012"])
        #expect(feed(&machine, "sync") == [] && machine.isIdle)
    }

    /// A preparation that fails fails the statements sent with its name, and the next ask
    /// prepares again (the schema may have changed).
    @Test func aFailedPreparationFailsItsStatementsAndIsPreparedAgainLater() {
        var machine = open(.shared)
        _ = machine.asked(.init(id: 1, sql: "SELECT nothing"))
        #expect(names(machine.turn(now: start)) == ["prepare s2", "sync", "execute 1 s2", "sync", "flush"])
        #expect(feed(&machine, "error") == [] && feed(&machine, "end") == [] && feed(&machine, "sync") == [])
        #expect(feed(&machine, "error") == [] && feed(&machine, "end") == ["fail [1] 22012"])
        #expect(feed(&machine, "sync") == [])
        _ = machine.asked(.init(id: 2, sql: "SELECT nothing"))
        #expect(names(machine.turn(now: start)) == ["prepare s3", "sync", "execute 2 s3", "sync", "flush"])
    }

    /// The connection lost mid-batch: what is out fails; on a shared connection what waits
    /// goes out on a new one, in a transaction it fails too (the transaction is gone).
    @Test func aConnectionLostMidBatchFailsWhatIsOut() {
        for mode in [Machine.Mode.shared, .transaction] {
            var machine = open(mode)
            _ = machine.asked(.init(id: 1, sql: "SELECT 0"))
            _ = machine.turn(now: start)
            _ = machine.asked(.init(id: 2, sql: "SELECT 0"))
            let lost = PostgresError(sqlState: "", message: "server closed the connection")
            let actions = names(machine.broken(lost))
            #expect(actions == (mode == .shared ? ["close", "fail [1] ", "open"] : ["close", "fail [1, 2] "]))
            #expect(machine.state == (mode == .shared ? .opening : .closed))
            // Reopened, nothing is thought prepared: the statement is prepared again.
            _ = machine.asked(.init(id: 3, sql: "SELECT 0"))
            _ = machine.connected()
            #expect(names(machine.turn(now: start)).first == "prepare s2")
        }
    }

    /// A statement out past the deadline: the connection is given up, what is out fails as
    /// unavailable (503), and no later report of the old connection is believed.
    @Test func aDeadlineGivesTheConnectionUp() {
        var machine = open(.shared)
        _ = machine.asked(.init(id: 1, sql: "SELECT 0"))
        _ = machine.turn(now: start)
        #expect(machine.nextDeadline == start + .seconds(5))
        #expect(names(machine.tick(now: start + .seconds(4))) == [])
        let actions = machine.tick(now: start + .seconds(5))
        #expect(names(actions) == ["close", "fail [1] "])
        if case .fail(_, let error) = actions.last { #expect(error.isUnavailable) }
        #expect(machine.nextDeadline == nil && machine.state == .closed)
    }

    /// A cancelled asker fails at once: a statement not yet sent is not sent; one out has its
    /// answer dropped when it comes.
    @Test func aCancelFailsTheAskerAtOnce() {
        var machine = open(.shared)
        _ = machine.asked(.init(id: 1, sql: "SELECT 0"))
        _ = machine.asked(.init(id: 2, sql: "SELECT 0"))
        #expect(names(machine.cancelled(2)) == ["fail [2] 57014"])
        #expect(names(machine.turn(now: start)) == ["execute 1 s1", "sync", "flush"])
        #expect(names(machine.cancelled(1)) == ["fail [1] 57014"])
        #expect(names(machine.cancelled(1)) == []) // once
        #expect(feed(&machine, "result") == [] && feed(&machine, "end") == [])
        #expect(feed(&machine, "sync") == [] && machine.isIdle)
        #expect(names(machine.cancelled(9)) == []) // unknown: nothing
    }

    /// Reports libpq cannot have for what was sent: the connection is given up.
    @Test func aReportWithNothingOutIsAProtocolViolation() {
        for event in ["result", "end", "sync", "aborted", "error"] {
            var machine = open(.shared)
            _ = machine.asked(.init(id: 1, sql: "SELECT 0"))
            if event == "sync" { _ = machine.turn(now: start) } // the head is a statement, not a sync
            let actions = feed(&machine, event)
            // Given up: closed, what was out failed, what waits goes out on a new connection.
            #expect(actions == (event == "sync" ? ["close", "fail [1] "] : ["close", "open"]), "\(event): \(actions)")
        }
    }

    /// A `connected` while not opening (a stale connection's): closed, the state unchanged.
    @Test func aStaleConnectedIsClosed() {
        var machine = open(.shared)
        #expect(names(machine.connected()) == ["close"])
        #expect(machine.state == .open)
    }
}
