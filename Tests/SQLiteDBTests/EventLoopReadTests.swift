#if canImport(Glibc)
import Glibc
#endif
import CNTLinux
import Foundation
import Synchronization
import Testing
import TestSupport
import NTThreadPools
@testable import NTSQLiteDB

/// Reads asked on an event loop's thread (`EventLoopThread`): answered there from memory, and
/// from a reader thread when the disk would have to be waited for.
@Suite struct EventLoopReadTests {
    /// Where each run of a read's body was: on the loop (true) or a reader thread.
    private final class Places: Sendable {
        private let list = Mutex<[Bool]>([])
        func note() { list.withLock { $0.append(EventLoopThread.current != nil) } }
        var all: [Bool] { list.withLock { $0 } }
        func clear() { list.withLock { $0.removeAll() } }
    }

    /// A pool with a connection for one loop, and a thread marked as that loop, as a task
    /// executor.
    private struct Setup {
        let path: String
        let pool: DatabasePool
        let loop = ThreadPool(name: "test-loop", threads: 1)

        init(rows: Int) async throws {
            path = testDirectory("loop-reads").appendingPathExtension("sqlite").path
            pool = try DatabasePool(path: path, readerCount: 2, loopReaderCount: 1)
            _ = try await pool.withWriter { db in
                try db.execute("CREATE TABLE t (x INTEGER PRIMARY KEY, padding BLOB)")
                try db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows)) INSERT INTO t SELECT i, zeroblob(500) FROM n")
            }
            try await loop.run { _ in EventLoopThread.adopt(index: 0) }
        }

        /// `body` as a task of the loop's thread.
        func onTheLoop<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
            try await Task(executorPreference: loop) { try await body() }.value
        }

        /// The sum of the table, its body's places noted.
        func sum(_ places: Places) async throws -> Int? {
            try await pool.read { db in
                places.note()
                // A refused read caught here would look like an empty table: never the answer.
                return (try? await db.first("SELECT sum(x) FROM t"))?.flatMap { try? $0.decodeIfPresent(0, as: Int.self) } ?? nil
            }
        }

        /// Leaves the database file's pages on the disk only: checkpointed into the file, a
        /// change so that the loop's connection reads it again, the page cache dropped.
        func evict() async throws {
            _ = try await pool.withWriter { db in
                try db.execute("UPDATE t SET padding = zeroblob(500) WHERE x = 1")
                try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
            let fd = open(path, O_RDONLY)
            #expect(fd >= 0)
            defer { close(fd) }
            // The kernel drops only clean pages: the checkpoint's writes are flushed first, and
            // a page still under writeback when asked is asked for again (a few times, in a
            // loaded test run).
            #expect(fdatasync(fd) == 0)
            var byte: UInt8 = 0
            var onDiskOnly = false
            for _ in 0..<20 where !onDiskOnly {
                #expect(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0)
                onDiskOnly = nt_pread_nowait(fd, &byte, 1, 4096 * 10) < 0 && errno == EAGAIN
            }
            try #require(onDiskOnly, "the page cache kept the file: a tmpfs?")
        }
    }

    @Test func aReadOfPagesInMemoryIsAnsweredOnTheLoop() async throws {
        let setup = try await Setup(rows: 2_000)
        let places = Places()
        let sum = try await setup.onTheLoop { try await setup.sum(places) }
        #expect(sum == 2_000 * 2_001 / 2)
        #expect(places.all == [true])
        #expect(try await setup.loop.run { _ in EventLoopThread.current!.refusedWaits } == 0)
    }

    /// The loop asks the kernel not to wait: a page on the disk is a refusal, the body's answer
    /// (an empty table, since it swallows the error) is dropped, and a reader thread reads it
    /// again and answers.
    @Test func aReadThatWouldWaitOnTheDiskIsAnsweredByAReaderThread() async throws {
        let setup = try await Setup(rows: 2_000)
        let places = Places()
        try await setup.evict()
        let sum = try await setup.onTheLoop { try await setup.sum(places) }
        #expect(sum == 2_000 * 2_001 / 2)
        #expect(places.all == [true, false])
        #expect(try await setup.loop.run { _ in EventLoopThread.current!.refusedWaits } > 0)
        // Once read by the reader, the pages are in memory again: the loop answers.
        places.clear()
        #expect(try await setup.onTheLoop { try await setup.sum(places) } == 2_000 * 2_001 / 2)
        #expect(places.all == [true])
    }

    /// A query asked on the loop (`prefetch`) is answered by the loop's next read, in its
    /// snapshot, even when that read has to go to a reader thread; one that no read took is
    /// run when awaited.
    @Test func aPrefetchedQueryJoinsTheLoopsNextRead() async throws {
        let setup = try await Setup(rows: 100)
        let count = SQLStatement("SELECT count(*) FROM t")
        for evicting in [false, true] {
            if evicting { try await setup.evict() }
            let (counted, max) = try await setup.onTheLoop {
                let pending = setup.pool.prefetch(count)
                let max = try await setup.pool.readOne { try await $0.first("SELECT max(x) FROM t")?.decodeIfPresent(0, as: Int.self) }
                return (try await pending.rows().first?.decodeIfPresent(0, as: Int.self), max)
            }
            #expect(counted == 100 && max == 100)
        }
        let alone = try await setup.onTheLoop { try await setup.pool.prefetch(count).rows().first?.decodeIfPresent(0, as: Int.self) }
        #expect(alone == 100)
    }
}
