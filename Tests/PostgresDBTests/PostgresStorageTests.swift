import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTPostgresDB

@Suite(.hangGuard, .testThreads) struct PostgresStatementTests {
    @Test func questionMarksBecomeNumberedParametersOutsideQuotes() {
        #expect(PostgresConnection.numbered("SELECT ? + ?, '?', \"a?\" FROM t WHERE x = ?") == "SELECT $1 + $2, '?', \"a?\" FROM t WHERE x = $3")
        #expect(PostgresConnection.numbered("SELECT 'it''s ?' , ?") == "SELECT 'it''s ?' , $1")
    }
}

/// The PostgreSQL storage against a server of the suite's own.
@Suite(.serialized, .hangGuard, .testThreads) final class PostgresStorageTests {
    let cluster: PostgresCluster

    init() throws {
        cluster = try PostgresCluster()
    }

    deinit { cluster.stop() }

    @Test func valuesComeBackAsSQLiteWouldReturnThem() async throws {
        let storage = PostgresStorage(url: try cluster.database("values"), transactionConnections: 2, handlerCount: 2)
        try await storage.write { db in
            try await db.execute("CREATE TABLE v (i BIGINT, n INTEGER, r DOUBLE PRECISION, t TEXT, b BYTEA, f BOOLEAN)")
            try await db.run("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?)", Int64.max, 7, 2.5, "ünï'code?", Blob([0, 1, 254, 255]), true)
            try await db.run("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?)", SQLValue.null, SQLValue.null, SQLValue.null, SQLValue.null, SQLValue.null, SQLValue.null)
            try await db.run("INSERT INTO v (i, b) VALUES (?, ?)", 0, Blob([]))
        }
        #expect(try await storage.read { try await $0.first("SELECT b FROM v WHERE i = 0")?.decode("b", as: SQLValue.self) } == .blob([])) // empty, not NULL
        let rows = try await storage.read { try await $0.query("SELECT * FROM v WHERE i IS DISTINCT FROM 0 ORDER BY i NULLS LAST") }
        #expect(rows[0].values == [.integer(Int64.max), .integer(7), .real(2.5), .text("ünï'code?"), .blob([0, 1, 254, 255]), .integer(1)])
        #expect(rows[1].values.allSatisfy { $0 == .null })
        let sum = try await storage.read { try await $0.first("SELECT coalesce(sum(i / 2), 0) AS s, count(*) AS c FROM v WHERE i IS DISTINCT FROM 0") }
        #expect(try sum?.decode("s", as: Int64.self) == Int64.max / 2 && sum?.decode("c", as: Int.self) == 2)
    }

    /// Read-then-write transactions from many callers at once: SERIALIZABLE plus the retry
    /// make them behave as if one ran at a time, as SQLite's single writer does.
    @Test func concurrentReadThenWriteTransactionsLoseNothing() async throws {
        let storage = PostgresStorage(url: try cluster.database("counter"), transactionConnections: 8, handlerCount: 2)
        try await storage.write { db in
            try await db.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
            try await db.execute("INSERT INTO counter VALUES (1, 0)")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    _ = try await storage.write { db in
                        let n = try await db.first("SELECT n FROM counter WHERE id = 1")?.decode("n", as: Int.self) ?? 0
                        return try await db.run("UPDATE counter SET n = ? WHERE id = 1", n + 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await storage.read { try await $0.first("SELECT n FROM counter")?.decodeIfPresent("n", as: Int.self) } == 200)
    }

    /// Check-then-insert of one key from many callers: one insert, the others see it.
    @Test func concurrentInsertsOfOneKeyMakeOneRow() async throws {
        let storage = PostgresStorage(url: try cluster.database("inserts"), transactionConnections: 8, handlerCount: 2)
        try await storage.write { try await $0.execute("CREATE TABLE k (id TEXT PRIMARY KEY, n INTEGER)") }
        let created = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await storage.write { db -> Bool in
                        guard try await db.first("SELECT 1 FROM k WHERE id = ?", "one") == nil else { return false }
                        try await db.run("INSERT INTO k VALUES (?, ?)", "one", 1)
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
        let storage = PostgresStorage(url: try cluster.database("restart"), transactionConnections: 2, handlerCount: 2)
        try await storage.write { try await $0.execute("CREATE TABLE r (x INTEGER)") }
        try cluster.restart()
        // The first statement on each old connection may find it broken; within a few tries
        // every connection is new and works.
        var worked = 0
        for _ in 0..<10 {
            do {
                _ = try await storage.write { try await $0.run("INSERT INTO r VALUES (?)", 1) }
                worked += 1
            } catch let error as PostgresError {
                #expect(error.isUnavailable, "\(error)")
            }
        }
        #expect(worked >= 8)
        #expect(try await storage.read { try await $0.first("SELECT count(*) AS c FROM r")?.decodeIfPresent("c", as: Int.self) } == worked)
    }

    /// A read is one snapshot: a writer that changes two rows together, again and again,
    /// never shows a reader one row before and one after, though the read's two statements
    /// are separate round trips.
    @Test func aReadIsOneSnapshot() async throws {
        let storage = PostgresStorage(url: try cluster.database("snapshot"), transactionConnections: 4, handlerCount: 2)
        try await storage.write { try await $0.execute("CREATE TABLE pair (side INTEGER PRIMARY KEY, n INTEGER)"); try await $0.execute("INSERT INTO pair VALUES (1, 0), (2, 0)") }
        let writer = Task {
            for n in 1...200 {
                try await storage.write { db in
                    try await db.run("UPDATE pair SET n = ? WHERE side = 1", n)
                    try await db.run("UPDATE pair SET n = ? WHERE side = 2", n)
                }
            }
        }
        let torn = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    var torn = 0
                    for _ in 0..<300 {
                        let (first, second) = try await storage.read { db in
                            let first = try await db.first("SELECT n FROM pair WHERE side = 1")?.decodeIfPresent(0, as: Int.self)
                            return (first, try await db.first("SELECT n FROM pair WHERE side = 2")?.decodeIfPresent(0, as: Int.self))
                        }
                        if first != second { torn += 1 }
                        if first == 200 { break }
                    }
                    return torn
                }
            }
            return try await group.reduce(0, +)
        }
        try await writer.value
        #expect(torn == 0)
    }

    /// Queries asked together are one batch: one round trip, BEGIN included; the read's COMMIT
    /// is one more, sent without waiting.
    @Test func queriesAskedTogetherAreOneRoundTrip() async throws {
        let storage = PostgresStorage(url: try cluster.database("batch"), transactionConnections: 1, handlerCount: 2)
        try await storage.write { try await $0.execute("CREATE TABLE b (id INTEGER PRIMARY KEY)") }
        let before = storage.roundTrips ?? 0
        let answers = try await storage.read { db in
            try await db.queries((1...10).map { SQLStatement("SELECT ? + 0 AS n", $0) })
        }
        #expect(try answers.map { try $0.first?.decode("n", as: Int.self) } == (1...10).map { $0 })
        #expect((storage.roundTrips ?? 0) - before <= 2)
        // A failure among them fails the read; the connection goes on.
        await #expect(throws: PostgresError.self) {
            try await storage.read { try await $0.queries([SQLStatement("SELECT 1"), SQLStatement("SELECT 1 / 0"), SQLStatement("SELECT 2")]) }
        }
        #expect(try await storage.read { try await $0.first("SELECT 3 AS n")?.decodeIfPresent("n", as: Int.self) } == 3)
    }

    /// Many single-statement reads at once share one connection: each gets its own answer,
    /// though they travel in batches with others'. One that fails fails alone: the statements
    /// PostgreSQL skipped behind it in their batch are sent again.
    @Test func concurrentStatementsOnASharedConnectionEachGetTheirOwnAnswers() async throws {
        let storage = PostgresStorage(url: try cluster.database("shared"), transactionConnections: 1, handlerCount: 2)
        try await storage.write { db in
            try await db.execute("CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT)")
            for id in 1...100 { try await db.run("INSERT INTO p (id, name) VALUES (?, ?)", id, "p\(id)") }
        }
        let outcomes = try await withThrowingTaskGroup(of: (Int, Result<String, PostgresError>).self) { group in
            for id in 1...400 {
                group.addTask {
                    do {
                        // Every seventh divides by zero.
                        let rows = try await storage.statement(SQLStatement("SELECT name FROM p WHERE id = CAST(? AS integer) / CAST(? AS integer)", id % 100 + 1, id % 7 == 0 ? 0 : 1))
                        return (id, .success(try rows.first?.decode("name", as: String.self) ?? "none"))
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
                #expect(id % 7 != 0 && name == "p\(id % 100 + 1)", "statement \(id) got \(name)")
            case .failure(let error):
                #expect(id % 7 == 0 && error.sqlState == "22012", "statement \(id) failed: \(error)")
            }
        }
    }

    /// A query asked now and awaited later, on a handler thread (as a GET's token check),
    /// goes out with what that thread asks next in the same run, on its shared connection; a
    /// one-statement read refuses a second statement.
    @Test func aPrefetchedQueryIsAnsweredBesideTheNextRead() async throws {
        let storage = PostgresStorage(url: try cluster.database("prefetch"), transactionConnections: 1, handlerCount: 2)
        try await storage.write { try await $0.execute("CREATE TABLE f (id INTEGER PRIMARY KEY)") }
        try await storage.write { try await $0.run("INSERT INTO f VALUES (?)", 1) }
        // On one handler thread throughout: what it asks goes on its own connection.
        let trips = try await withTaskExecutorPreference(storage.handlerThreads) {
            _ = try await storage.readOne { try await $0.first("SELECT id FROM f") } // prepared: the next are one batch each
            _ = try await storage.statement(SQLStatement("SELECT count(*) AS n FROM f"))
            let before = storage.roundTrips ?? 0
            let pending = storage.prefetch(SQLStatement("SELECT count(*) AS n FROM f"))
            #expect(try await storage.readOne { try await $0.first("SELECT id FROM f")?.decodeIfPresent("id", as: Int.self) } == 1)
            #expect(try await pending.rows().first?.decode("n", as: Int.self) == 1)
            return (storage.roundTrips ?? 0) - before
        }
        #expect(trips == 1, "the prefetched query went out with the read, in one batch")
        // Awaited with nothing asked after it, it goes out all the same.
        #expect(try await storage.prefetch(SQLStatement("SELECT 5 AS n")).rows().first?.decode("n", as: Int.self) == 5)
        let failing = storage.prefetch(SQLStatement("SELECT nothing FROM f"))
        await #expect(throws: PostgresError.self) { try await failing.rows() }
        await #expect(throws: OneStatementOnly.self) {
            try await storage.readOne { db in
                _ = try await db.query("SELECT 1")
                return try await db.query("SELECT 2")
            }
        }
    }

    /// Identical prefetches asked on one handler thread before its batch goes out are one
    /// execution (sent after both were asked: a token's check for several requests); one asked
    /// after the batch went out, or with other values, is its own.
    @Test func identicalPrefetchesNotYetSentShareOneExecution() async throws {
        let storage = PostgresStorage(url: try cluster.database("joined"), transactionConnections: 1, handlerCount: 2)
        try await storage.write { try await $0.execute("CREATE SEQUENCE s") }
        let values = try await withTaskExecutorPreference(storage.handlerThreads) {
            let asked = SQLStatement("SELECT nextval('s') + ? AS n", 0)
            let first = storage.prefetch(asked), second = storage.prefetch(asked)
            let other = storage.prefetch(SQLStatement("SELECT nextval('s') + ? AS n", 1000))
            let together = try await [first.rows(), second.rows(), other.rows()].map { try $0.first?.decode("n", as: Int.self) ?? 0 }
            let later = try await storage.prefetch(asked).rows().first?.decode("n", as: Int.self) ?? 0
            return together + [later]
        }
        #expect(values[0] == values[1], "one execution answered both")
        #expect(values[2] > 1000 && values[2] - 1000 != values[0], "other values: an execution of its own")
        #expect(values[3] > values[0] && values[3] < 1000, "asked after the batch went out: an execution of its own")
    }

    /// A read's body sees each answer where it asked, also after catching a failure (which
    /// aborts the transaction: what follows fails too); a statement that cannot be prepared
    /// is prepared again when asked again (the schema may have changed).
    @Test func aFailureInsideAReadFailsWhatFollowsAndTheConnectionGoesOn() async throws {
        let storage = PostgresStorage(url: try cluster.database("failures"), transactionConnections: 1, handlerCount: 2)
        try await storage.write { db in
            try await db.execute("CREATE TABLE q (id INTEGER PRIMARY KEY, name TEXT)")
            try await db.run("INSERT INTO q VALUES (?, ?), (?, ?)", 1, "one", 2, "two")
        }
        let seen = try await storage.read { db -> [String] in
            var seen: [String] = []
            for id in [2, 1] { seen.append(try await db.first("SELECT name FROM q WHERE id = ?", id)?.decodeIfPresent("name", as: String.self) ?? "-") }
            for sql in ["SELECT nothing FROM q", "SELECT count(*) FROM q"] {
                do {
                    _ = try await db.query(sql)
                    seen.append("no failure")
                } catch let error as PostgresError {
                    seen.append(error.sqlState)
                }
            }
            return seen
        }
        #expect(seen == ["two", "one", "42703", "25P02"])
        #expect(try await storage.read { try await $0.query("SELECT name FROM q ORDER BY id").map { try $0.decode("name", as: String.self) } } == ["one", "two"])
        await #expect(throws: PostgresError.self) { try await storage.read { try await $0.query("SELECT id FROM later") } }
        try await storage.write { try await $0.execute("CREATE TABLE later (id INTEGER)") }
        #expect(try await storage.read { try await $0.query("SELECT id FROM later").count } == 0)
    }

    /// A server process that stops answering: what is in flight on its connection fails
    /// once the statement's deadline has passed, the connection is made again, and the read
    /// (which changes nothing) runs once more on the new one.
    @Test func aServerThatStopsAnsweringIsGivenUpAtTheDeadline() async throws {
        let storage = PostgresStorage(url: try cluster.database("stalled"), transactionConnections: 1, handlerCount: 2,
                                      statementTimeoutSeconds: 1)
        let backend = try await storage.read { try await $0.first("SELECT pg_backend_pid() AS pid")?.decodeIfPresent("pid", as: Int.self) } ?? 0
        #expect(backend > 0)
        kill(pid_t(backend), SIGSTOP) // the lent connection's server process stops answering
        defer { kill(pid_t(backend), SIGCONT) }
        let started = ContinuousClock.now
        let again = try await storage.read { try await $0.first("SELECT pg_backend_pid() AS pid")?.decodeIfPresent("pid", as: Int.self) } ?? 0
        #expect(again > 0 && again != backend)
        #expect(ContinuousClock.now - started >= .seconds(2) && ContinuousClock.now - started < .seconds(10))
        // The same for a handler thread's shared connection, under one-statement reads.
        try await withTaskExecutorPreference(storage.handlerThreads) {
            let shared = try await storage.statement(SQLStatement("SELECT pg_backend_pid() AS pid")).first?.decode("pid", as: Int.self) ?? 0
            #expect(shared > 0)
            kill(pid_t(shared), SIGSTOP)
            defer { kill(pid_t(shared), SIGCONT) }
            let asked = ContinuousClock.now
            let next = try await storage.statement(SQLStatement("SELECT pg_backend_pid() AS pid")).first?.decode("pid", as: Int.self) ?? 0
            #expect(next > 0 && next != shared)
            #expect(ContinuousClock.now - asked >= .seconds(2) && ContinuousClock.now - asked < .seconds(10))
        }
        // The server's own statement timeout is unavailable (503): the server is overloaded.
        await #expect {
            try await storage.statement(SQLStatement("SELECT pg_sleep(3)"))
        } throws: { ($0 as? PostgresError)?.sqlState == "57014" }
    }

    /// A storage no one holds ends its threads and closes its connections. Its threads are the
    /// ones of its names that were not there before it (other suites' tests start and end
    /// threads meanwhile, so the process's count says nothing; this suite runs one at a time).
    @Test func aStorageNoOneHoldsEndsItsThreads() async throws {
        let url = try cluster.database("dropped")
        let names: Set<String> = ["pg-tools", "pg-io", "pg-io-connect", "handler", "handler-connect"]
        func storageThreads() -> Set<String> {
            Set(directoryEntries("/proc/self/task").filter { tid in
                let name = (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8)) ?? ""
                let base = name.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "-[0-9]+$", with: "", options: .regularExpression)
                return names.contains(base)
            })
        }
        let before = storageThreads()
        let started: Set<String>
        do {
            let storage = PostgresStorage(url: url, transactionConnections: 2, handlerCount: 2)
            #expect(try await storage.read { try await $0.first("SELECT 1 AS one")?.decode("one", as: SQLValue.self) } == .integer(1))
            #expect(try await storage.write { try await $0.first("SELECT 2 AS two")?.decode("two", as: SQLValue.self) } == .integer(2))
            started = storageThreads().subtracting(before)
            #expect(started.count >= 4, "\(started)") // the loop, its connector, two handlers, the tools thread
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !storageThreads().isDisjoint(with: started), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(storageThreads().isDisjoint(with: started))
    }
}
