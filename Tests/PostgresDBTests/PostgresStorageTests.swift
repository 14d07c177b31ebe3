import Foundation
import Testing
import TestSupport
@testable import PostgresDB

@Suite(.timeLimit(.minutes(3))) struct PostgresStatementTests {
    @Test func questionMarksBecomeNumberedParametersOutsideQuotes() {
        #expect(PostgresConnection.numbered("SELECT ? + ?, '?', \"a?\" FROM t WHERE x = ?") == "SELECT $1 + $2, '?', \"a?\" FROM t WHERE x = $3")
        #expect(PostgresConnection.numbered("SELECT 'it''s ?' , ?") == "SELECT 'it''s ?' , $1")
    }
}

/// The PostgreSQL storage against a server of the suite's own.
@Suite(.serialized, .timeLimit(.minutes(3))) final class PostgresStorageTests {
    let cluster: PostgresCluster

    init() throws {
        cluster = try PostgresCluster()
    }

    deinit { cluster.stop() }

    @Test func valuesComeBackAsSQLiteWouldReturnThem() async throws {
        let storage = PostgresStorage(url: try cluster.database("values"), writerCount: 2, handlerCount: 2, readPipelines: 1)
        try await storage.write { db in
            try db.execute("CREATE TABLE v (i BIGINT, n INTEGER, r DOUBLE PRECISION, t TEXT, b BYTEA, f BOOLEAN)")
            try db.run("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?)", Int64.max, 7, 2.5, "ünï'code?", Blob([0, 1, 254, 255]), true)
            try db.run("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?)", SQLValue.null, SQLValue.null, SQLValue.null, SQLValue.null, SQLValue.null, SQLValue.null)
            try db.run("INSERT INTO v (i, b) VALUES (?, ?)", 0, Blob([]))
        }
        #expect(try await storage.read { try $0.first("SELECT b FROM v WHERE i = 0")?["b"] } == .blob([])) // empty, not NULL
        let rows = try await storage.read { try $0.query("SELECT * FROM v WHERE i IS DISTINCT FROM 0 ORDER BY i NULLS LAST") }
        #expect(rows[0]["i"] == .integer(Int64.max) && rows[0]["n"] == .integer(7) && rows[0]["r"] == .real(2.5))
        #expect(rows[0]["t"] == .text("ünï'code?") && rows[0]["b"] == .blob([0, 1, 254, 255]) && rows[0]["f"] == .integer(1))
        #expect(rows[1].values.allSatisfy { $0 == .null })
        let sum = try await storage.read { try $0.first("SELECT coalesce(sum(i / 2), 0) AS s, count(*) AS c FROM v WHERE i IS DISTINCT FROM 0") }
        #expect(sum?["s"] == .integer(Int64.max / 2) && sum?["c"] == .integer(2))
    }

    /// Read-then-write transactions from many callers at once: SERIALIZABLE plus the retry
    /// make them behave as if one ran at a time, as SQLite's single writer does.
    @Test func concurrentReadThenWriteTransactionsLoseNothing() async throws {
        let storage = PostgresStorage(url: try cluster.database("counter"), writerCount: 8, handlerCount: 2, readPipelines: 1)
        try await storage.write { db in
            try db.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0)")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    _ = try await storage.write { db in
                        let n = try db.first("SELECT n FROM counter WHERE id = 1")?["n"].int ?? 0
                        return try db.run("UPDATE counter SET n = ? WHERE id = 1", n + 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await storage.read { try $0.first("SELECT n FROM counter")?["n"].int } == 200)
    }

    /// Check-then-insert of one key from many callers: one insert, the others see it.
    @Test func concurrentInsertsOfOneKeyMakeOneRow() async throws {
        let storage = PostgresStorage(url: try cluster.database("inserts"), writerCount: 8, handlerCount: 2, readPipelines: 1)
        try await storage.write { try $0.execute("CREATE TABLE k (id TEXT PRIMARY KEY, n INTEGER)") }
        let created = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await storage.write { db -> Bool in
                        guard try db.first("SELECT 1 FROM k WHERE id = ?", "one") == nil else { return false }
                        try db.run("INSERT INTO k VALUES (?, ?)", "one", 1)
                        return true
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(created == 1)
    }

    /// The server restarting: statements fail as unavailable meanwhile, and the storage
    /// connects again on its own when the server is back.
    @Test func aRestartedServerIsReconnectedTo() async throws {
        let storage = PostgresStorage(url: try cluster.database("restart"), writerCount: 2, handlerCount: 2, readPipelines: 1)
        try await storage.write { try $0.execute("CREATE TABLE r (x INTEGER)") }
        try cluster.restart()
        // The first statement on each old connection may find it broken; within a few tries
        // every connection is new and works.
        var worked = 0
        for _ in 0..<10 {
            do {
                _ = try await storage.write { try $0.run("INSERT INTO r VALUES (?)", 1) }
                worked += 1
            } catch let error as PostgresError {
                #expect(error.isUnavailable, "\(error)")
            }
        }
        #expect(worked >= 8)
        #expect(try await storage.read { try $0.first("SELECT count(*) AS c FROM r")?["c"].int } == worked)
    }

    /// The query ahead and a read's first query are one statement (`joined`): the read gets
    /// exactly its rows, in its order, whatever their columns; a first statement that is not a
    /// query has the query ahead run before it, on its own.
    @Test func aQueryAheadJoinedToTheFirstQueryKeepsItsRowsTheirOrderAndColumns() async throws {
        let storage = PostgresStorage(url: try cluster.database("joined"), writerCount: 1, handlerCount: 2, readPipelines: 1)
        try await storage.write { db in
            try db.execute("CREATE TABLE n (id INTEGER PRIMARY KEY, name TEXT)")
            for id in 1...60 { try db.run("INSERT INTO n VALUES (?, ?)", id, "n\(id)") }
        }
        let ahead = SQLStatement("SELECT name FROM n WHERE id = ?", 7)
        let ordered = try await storage.read { db in
            try db.withQueryAhead(ahead) { try $0.query("SELECT id, name AS id FROM n WHERE id > ? ORDER BY name DESC LIMIT ? -- a comment", 10, 25) }
        }
        #expect(ordered.rows.map { $0["name"] } == [.text("n7")])
        let rows = try ordered.result.get()
        let expected = (11...60).map { "n\($0)" }.sorted(by: >).prefix(25)
        #expect(rows.map { $0.values[1] } == expected.map { SQLValue.text($0) })
        #expect(rows.first?.columns == ["id", "id"])
        // No row: the read gets none, the query ahead its own.
        let empty = try await storage.read { db in try db.withQueryAhead(ahead) { try $0.query("SELECT id FROM n WHERE id < 0") } }
        #expect(try empty.rows.count == 1 && empty.result.get().isEmpty)
        // The query ahead finds nothing: the read's query is not asked, and finds nothing.
        let unknown = try await storage.read { db in
            try db.withQueryAhead(SQLStatement("SELECT name FROM n WHERE id = ?", 0)) { try $0.query("SELECT id FROM n").count }
        }
        #expect(try unknown.rows.isEmpty && unknown.result.get() == 0)
        // A first statement that is not a query: the query ahead runs before it, alone.
        let written = try await storage.read { db in
            try db.withQueryAhead(ahead) { db in try db.run("UPDATE n SET name = name WHERE id = ?", 1) }
        }
        #expect(try written.rows.count == 1 && written.result.get() == 1)
        #expect(PostgresConnection.isQuery("select\n1") && PostgresConnection.isQuery("SELECT *") && !PostgresConnection.isQuery("WITH x AS (SELECT 1) SELECT 1"))
    }

    /// A query sent ahead of a read's first statement, in one round trip: both answered, in
    /// order, whatever the read does; its failure is the read's; the connection goes on.
    @Test func aQueryAheadIsAnsweredWithTheFirstStatement() async throws {
        let storage = PostgresStorage(url: try cluster.database("ahead"), writerCount: 1, handlerCount: 2, readPipelines: 1)
        try await storage.write { db in
            try db.execute("CREATE TABLE k (id INTEGER PRIMARY KEY, name TEXT)")
            try db.run("INSERT INTO k VALUES (?, ?), (?, ?)", 1, "one", 2, "two")
        }
        let ahead = SQLStatement("SELECT name FROM k WHERE id = ?", 1)
        // With one statement, with two, with none.
        let one = try await storage.read { db in try db.withQueryAhead(ahead) { try $0.first("SELECT name FROM k WHERE id = ?", 2)?["name"] } }
        #expect(one.rows.first?["name"] == .text("one"))
        #expect(try one.result.get() == .text("two"))
        let two = try await storage.read { db in
            try db.withQueryAhead(ahead) { db in try db.query("SELECT id FROM k ORDER BY id").count + db.query("SELECT id FROM k").count }
        }
        #expect(two.rows.count == 1)
        #expect(try two.result.get() == 4)
        let none = try await storage.read { db in try db.withQueryAhead(ahead) { _ in 7 } }
        #expect(none.rows.first?["name"] == .text("one"))
        #expect(try none.result.get() == 7)
        // The body's own error is its result; the query ahead still answered.
        let failing = try await storage.read { db in try db.withQueryAhead(ahead) { try $0.query("SELECT nothing FROM k") } }
        #expect(failing.rows.count == 1)
        #expect(throws: PostgresError.self) { try failing.result.get() }
        // A query ahead that fails throws, and the statement sent behind it was not run.
        await #expect(throws: PostgresError.self) {
            try await storage.read { db in try db.withQueryAhead(SQLStatement("SELECT nothing FROM k")) { try $0.query("SELECT 1") } }
        }
        // The connection is usable afterwards, in and out of pipelines.
        #expect(try await storage.read { try $0.query("SELECT id FROM k").count } == 2)
        let again = try await storage.read { db in try db.withQueryAhead(ahead) { try $0.query("SELECT id FROM k").count } }
        #expect(again.rows.count == 1)
        #expect(try again.result.get() == 2)
        // A restarted server: the pipeline fails as unavailable, and a later one works.
        try cluster.restart()
        var worked = false
        for _ in 0..<3 where !worked {
            do {
                let after = try await storage.read { db in try db.withQueryAhead(ahead) { try $0.query("SELECT id FROM k").count } }
                let count = try after.result.get()
                worked = after.rows.count == 1 && count == 2
            } catch let error as PostgresError {
                #expect(error.isUnavailable, "\(error)")
            }
        }
        #expect(worked)
    }

    /// Many reads at once share one pipeline: each gets the answers to its own statements,
    /// in its own order, though they travel in batches with others'. A statement that fails
    /// fails its read alone: the statements PostgreSQL skipped behind it in their batch are sent
    /// again. A statement that changes rows is committed once, whatever fails around it.
    @Test func concurrentReadsOnOnePipelineEachGetTheirOwnAnswers() async throws {
        let storage = PostgresStorage(url: try cluster.database("shared"), writerCount: 1, handlerCount: 2, readPipelines: 1)
        try await storage.write { db in
            try db.execute("CREATE TABLE p (id INTEGER PRIMARY KEY, next INTEGER, name TEXT, hits INTEGER NOT NULL DEFAULT 0)")
            for id in 1...100 { try db.run("INSERT INTO p (id, next, name) VALUES (?, ?, ?)", id, id % 100 + 1, "p\(id)") }
        }
        let outcomes = try await withThrowingTaskGroup(of: (Int, Result<String, PostgresError>).self) { group in
            for id in 1...400 {
                group.addTask {
                    do {
                        // Each statement needs the answer before it; every seventh divides by
                        // zero; every eleventh counts a hit first.
                        let name = try await storage.read { db -> String in
                            if id % 11 == 0 { try db.run("UPDATE p SET hits = hits + 1 WHERE id = ?", 1) }
                            let next = try db.first("SELECT next FROM p WHERE id = ?", id % 100 + 1)?["next"].int ?? 0
                            let divisor = try db.first("SELECT 1 / ? AS one", id % 7 == 0 ? 0 : 1)?["one"].int ?? 0
                            return try db.first("SELECT name FROM p WHERE id = ?", next * divisor)?["name"].string ?? "none"
                        }
                        return (id, .success(name))
                    } catch let error as PostgresError {
                        return (id, .failure(error))
                    }
                }
            }
            return try await group.reduce(into: [Int: Result<String, PostgresError>]()) { $0[$1.0] = $1.1 }
        }
        #expect(outcomes.count == 400)
        for (id, outcome) in outcomes {
            switch outcome {
            case .success(let name):
                #expect(id % 7 != 0 && name == "p\((id + 1) % 100 + 1)", "read \(id) got \(name)")
            case .failure(let error):
                #expect(id % 7 == 0 && error.sqlState == "22012", "read \(id) failed: \(error)")
            }
        }
        #expect(try await storage.read { try $0.first("SELECT hits FROM p WHERE id = 1")?["hits"].int } == (1...400).count { $0 % 11 == 0 })
    }

    /// A read's body is run again as its statements are answered: it sees each answer at the
    /// statement that asked, even when it catches a failure and goes on, and a statement that
    /// cannot be prepared fails its read (and the next that sends it) without stopping others.
    @Test func aReadSeesEachAnswerWhereItAskedEvenWhenItCatchesAFailure() async throws {
        let storage = PostgresStorage(url: try cluster.database("replay"), writerCount: 1, handlerCount: 2, readPipelines: 1)
        try await storage.write { db in
            try db.execute("CREATE TABLE q (id INTEGER PRIMARY KEY, name TEXT)")
            try db.run("INSERT INTO q VALUES (?, ?), (?, ?)", 1, "one", 2, "two")
        }
        let seen = try await storage.read { db -> [String] in
            var seen: [String] = []
            for id in [2, 1] { seen.append(try db.first("SELECT name FROM q WHERE id = ?", id)?["name"].string ?? "-") }
            do {
                _ = try db.query("SELECT nothing FROM q")
                seen.append("no failure")
            } catch let error as PostgresError {
                seen.append(error.sqlState)
            }
            seen.append(try db.first("SELECT count(*) AS c FROM q")?["c"].int.map(String.init) ?? "-")
            return seen
        }
        #expect(seen == ["two", "one", "42703", "2"])
        for _ in 0..<2 {
            await #expect(throws: PostgresError.self) { try await storage.read { try $0.query("SELEC name FROM q") } }
        }
        #expect(try await storage.read { try $0.query("SELECT name FROM q ORDER BY id").map { $0["name"] } } == [.text("one"), .text("two")])
        // A statement that could not be prepared is prepared again when asked again: the
        // schema may have changed meanwhile.
        await #expect(throws: PostgresError.self) { try await storage.read { try $0.query("SELECT id FROM later") } }
        try await storage.write { try $0.execute("CREATE TABLE later (id INTEGER)") }
        #expect(try await storage.read { try $0.query("SELECT id FROM later").count } == 0)
    }

    /// A storage no one holds ends its threads and closes its connections.
    @Test func aStorageNoOneHoldsEndsItsThreads() async throws {
        let url = try cluster.database("dropped")
        func threads() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0 }
        let before = threads()
        do {
            let storage = PostgresStorage(url: url, writerCount: 2, handlerCount: 2, readPipelines: 2)
            #expect(try await storage.read { try $0.first("SELECT 1 AS one")?["one"] } == .integer(1))
            #expect(try await storage.write { try $0.first("SELECT 2 AS two")?["two"] } == .integer(2))
            #expect(threads() >= before + 6)
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while threads() > before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(threads() <= before)
    }
}
