import NTSQLKit
import Testing
@testable import NTPostgresDB

/// Who shares an execution of an identical statement, without a server.
@Suite struct StatementJoinsTests {
    typealias Joins = StatementJoins<String>
    let check = Joins.Key(sql: "SELECT tenant FROM tokens WHERE hash = ?", values: [.text("a")])

    @Test func identicalStatementsAskedBeforeTheBatchShareItsAnswer() {
        var joins = Joins()
        let led = [joins.join(check, id: 1, "first"), joins.join(check, id: 2, "second"),
                   joins.join(Joins.Key(sql: check.sql, values: [.text("b")]), id: 3, "another token")]
        #expect(led == [false, true, false])
        joins.batchSent()
        let after = joins.join(check, id: 4, "after the batch")
        #expect(!after, "a batch sent is joined by nothing asked after it")
        let (first, other) = (joins.answered(1), joins.answered(3))
        #expect(first == ["second"] && other == [])
    }

    /// The outage's hang (issue 45, finding 11): a connection that could not be made fails its
    /// statements before any batch goes out; a statement asked next must not join one already
    /// answered, or nothing ever answers it.
    @Test func aStatementAnsweredBeforeItsBatchIsJoinedByNothingAfter() {
        var joins = Joins()
        let led = [joins.join(check, id: 1, "first"), joins.join(check, id: 2, "second")]
        let told = joins.answered(1) // the connection could not be made: both are told
        let next = [joins.join(check, id: 3, "third"), joins.join(check, id: 4, "fourth")]
        #expect(led == [false, true] && told == ["second"])
        #expect(next == [false, true], "the next identical statement leads, and is asked")
        let waiting = joins.removeAll()
        #expect(waiting == ["fourth"])
    }
}
