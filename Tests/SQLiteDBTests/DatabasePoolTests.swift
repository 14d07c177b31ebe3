#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport
import NTThreadPools
@testable import NTSQLiteDB

@Suite struct DatabasePoolTests {
    private func pool(readers: Int = 2) async throws -> DatabasePool {
        let path = testDirectory("pool").appendingPathExtension("sqlite").path
        let pool = try DatabasePool(path: path, readerCount: readers)
        _ = try await pool.withWriter { try $0.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)") }
        return pool
    }

    @Test func concurrentWritesAreEachCommittedOnce() async throws {
        let pool = try await pool()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for value in 0..<200 {
                group.addTask { try await pool.write { try await $0.run("INSERT INTO t VALUES (?)", value) } }
            }
            try await group.waitForAll()
        }
        #expect(try await pool.read { try await $0.first("SELECT count(*) FROM t")?.decodeIfPresent(0, as: Int.self) } == 200)
    }

    /// A service stopping stops its pool, whatever still holds a reference to it: its threads
    /// end, and what is asked afterwards is refused (a read does not hop to a stopped pool again
    /// and again; a write does not run on the caller's thread beside the writer's).
    @Test func aStoppedPoolRefusesReadsAndWrites() async throws {
        let pool = try await pool()
        try await pool.write { try await $0.run("INSERT INTO t VALUES (?)", 1) }
        pool.stop()
        await #expect(throws: PoolStopped.self) { try await pool.read { try await $0.first("SELECT count(*) FROM t")?.decodeIfPresent(0, as: Int.self) } }
        await #expect(throws: PoolStopped.self) { try await pool.readOne { try await $0.first("SELECT count(*) FROM t")?.decodeIfPresent(0, as: Int.self) } }
        await #expect(throws: PoolStopped.self) { try await pool.write { try await $0.run("INSERT INTO t VALUES (?)", 2) } }
        await #expect(throws: PoolStopped.self) { try await pool.withWriter { try $0.execute("INSERT INTO t VALUES (3)") } }
    }

    /// A lazy write commits without its flush (`synchronous=NORMAL` while it runs), is read at
    /// once like any other, and the writer is durable again for the writes after it, in a
    /// batch or outside one.
    @Test func aLazyWriteIsVisibleAtOnceAndTheNextWriteIsDurable() async throws {
        let pool = try await pool()
        let synchronous: @Sendable (any SQLConnection) async throws -> Int? = { try await $0.first("PRAGMA synchronous")?.decodeIfPresent(0, as: Int.self) }
        let lazy = try await pool.write(durable: false) { db in
            try await db.run("INSERT INTO t VALUES (?)", 1)
            return try await synchronous(db)
        }
        #expect(lazy == 1) // NORMAL: the WAL is not synced at this commit
        #expect(try await pool.readOne { try await $0.first("SELECT count(*) FROM t")?.decodeIfPresent(0, as: Int.self) } == 1)
        #expect(try await pool.write { try await synchronous($0) } == 2) // FULL
        // The writer outside a batch (migrations, tools) commits durably after a lazy batch too.
        try await pool.write(durable: false) { try await $0.run("INSERT INTO t VALUES (?)", 2) }
        #expect(try await pool.withWriter { try $0.first("PRAGMA synchronous")?.decode(0, as: SQLValue.self) } == .integer(2))
    }

    @Test func aFailingWriteRollsBackAloneInItsBatch() async throws {
        let pool = try await pool()
        try await pool.write { try await $0.run("INSERT INTO t VALUES (?)", 1) }
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for value in [1, 2, 3, 1, 4] { // the two 1s collide with the row already there
                group.addTask {
                    do {
                        try await pool.write { db in
                            try await db.run("INSERT INTO t VALUES (?)", value + 100) // undone too when the write fails
                            try await db.run("INSERT INTO t VALUES (?)", value)
                        }
                        return true
                    } catch let error as SQLiteError {
                        #expect(error.isConstraint)
                        return false
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 3)
        let rows = try await pool.read { try await $0.query("SELECT x FROM t ORDER BY x").compactMap { try $0.decodeIfPresent(0, as: Int.self) } }
        #expect(rows == [1, 2, 3, 4, 102, 103, 104])
    }

    /// More reads at once than the pool has readers wait in one queue: no connection is
    /// opened for them, and each sees what was committed.
    @Test func readsBeyondThePoolWaitForAFreeReader() async throws {
        let pool = try await pool(readers: 2)
        try await pool.write { try await $0.run("INSERT INTO t VALUES (?)", 7) }
        let concurrency = Concurrency()
        let values = try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    try await pool.read { db in
                        concurrency.enter()
                        defer { concurrency.leave() }
                        usleep(10_000) // on the reader's own thread: holds that reader a while
                        return try await db.first("SELECT x FROM t")?.decodeIfPresent(0, as: Int.self)
                    }
                }
            }
            return try await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(values == Array(repeating: 7, count: 12))
        #expect(concurrency.most == 2)
    }

    /// WAL: a read is answered while a write's transaction is still open.
    @Test func aReadNeverWaitsBehindAWrite() async throws {
        let pool = try await pool()
        let readDone = Concurrency()
        let writing = Task {
            try await pool.write { db in
                try await db.run("INSERT INTO t VALUES (?)", 1)
                // Holds the transaction open until the read below came back (bounded).
                for _ in 0..<500 where readDone.most == 0 { usleep(10_000) }
            }
        }
        let count = try await pool.read { try await $0.first("SELECT count(*) FROM t")?.decodeIfPresent(0, as: Int.self) }
        readDone.enter()
        #expect(count == 0) // the write is not committed yet, and the read did not wait for it
        try await writing.value
        #expect(try await pool.read { try await $0.first("SELECT count(*) FROM t")?.decodeIfPresent(0, as: Int.self) } == 1)
    }

    /// A read's statements answer from one committed state: a writer that changes two rows
    /// together, again and again, never shows a reader one row before and one after, even when
    /// the read pauses between its two statements.
    @Test func aReadIsOneSnapshot() async throws {
        let pool = try await pool()
        _ = try await pool.withWriter { try $0.execute("CREATE TABLE pair (side INTEGER PRIMARY KEY, n INTEGER); INSERT INTO pair VALUES (1, 0), (2, 0)") }
        let writer = Task {
            for n in 1...300 {
                try await pool.write { db in
                    try await db.run("UPDATE pair SET n = ? WHERE side = 1", n)
                    try await db.run("UPDATE pair SET n = ? WHERE side = 2", n)
                }
            }
        }
        var torn = 0
        var reads = 0
        while !writer.isCancelled, reads < 2_000 {
            let (first, second) = try await pool.read { db in
                let first = try await db.first("SELECT n FROM pair WHERE side = 1")?.decodeIfPresent(0, as: Int.self)
                usleep(200) // a write commits in between, often
                return (first, try await db.first("SELECT n FROM pair WHERE side = 2")?.decodeIfPresent(0, as: Int.self))
            }
            reads += 1
            if first != second { torn += 1 }
            if first == 300 { break }
        }
        try await writer.value
        #expect(torn == 0)
        #expect(reads > 10)
    }

    /// A one-statement read asks one statement (one snapshot with no transaction); a second is
    /// refused, so a body that needs two cannot pass for one on either backend.
    @Test func aOneStatementReadRefusesASecond() async throws {
        let storage = SQLiteStorage(try await pool())
        try await storage.write { try await $0.run("INSERT INTO t VALUES (?)", 3) }
        #expect(try await storage.readOne { try await $0.first("SELECT x FROM t")?.decodeIfPresent(0, as: Int.self) } == 3)
        await #expect(throws: OneStatementOnly.self) {
            try await storage.readOne { db in
                _ = try await db.query("SELECT x FROM t")
                return try await db.query("SELECT x FROM t")
            }
        }
        // Asked now, awaited later: the rows are what the database held when they are read.
        let pending = storage.prefetch(SQLStatement("SELECT count(*) FROM t"))
        #expect(try await pending.rows().first?.decode(0, as: Int.self) == 1)
    }

    /// Migrations and tools run on the writer outside any transaction and begin their own (one
    /// inside another would be refused); what they commit is there for the next read.
    @Test func theWriterOutsideATransactionRunsWhatBeginsItsOwn() async throws {
        let pool = try await pool()
        try await pool.withWriter { try $0.execute("BEGIN; INSERT INTO t VALUES (5); COMMIT") }
        #expect(try await pool.read { try await $0.first("SELECT x FROM t")?.decodeIfPresent(0, as: Int.self) } == 5)
    }
}

/// Counts how many callers are inside at once, and the most there ever were.
private final class Concurrency: Sendable {
    private let counts = Mutex<(now: Int, most: Int)>((0, 0))

    func enter() {
        counts.withLock { counts in
            counts.now += 1
            counts.most = max(counts.most, counts.now)
        }
    }

    func leave() { counts.withLock { $0.now -= 1 } }

    var most: Int { counts.withLock { $0.most } }
}
