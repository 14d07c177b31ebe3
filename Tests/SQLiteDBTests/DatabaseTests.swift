import Foundation
import Testing
import TestSupport
@testable import NTSQLiteDB

@Suite struct DatabaseTests {
    private func temporaryPath() -> String {
        testDirectory("db").appendingPathExtension("sqlite").path
    }

    @Test func opensInWALWithFullSyncAndForeignKeys() throws {
        let path = temporaryPath()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database = try Database(path: path)
        #expect(try database.first("PRAGMA journal_mode")?.decode(0, as: SQLValue.self) == .text("wal"))
        #expect(try database.first("PRAGMA synchronous")?.decode(0, as: SQLValue.self) == .integer(2)) // FULL
        #expect(try database.first("PRAGMA foreign_keys")?.decode(0, as: SQLValue.self) == .integer(1))
        try database.execute("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('a')")
        #expect(try database.first("SELECT x FROM t")?.decode(0, as: SQLValue.self) == .text("a"))
    }

    @Test func badSQLThrowsWithTheMessage() throws {
        let path = temporaryPath()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database = try Database(path: path)
        let error = #expect(throws: SQLiteError.self) { try database.execute("CREATE TABLE") }
        #expect(error?.message.contains("incomplete input") == true, "\(error?.message ?? "")")
    }

    @Test func unopenablePathThrows() {
        #expect(throws: SQLiteError.self) { _ = try Database(path: "/nonexistent-dir/sub/db.sqlite") }
    }
}

@Suite struct TextWithNULTests {
    @Test func textWithANULInsideIsStoredAndReadWhole() throws {
        let database = try Database(path: testDirectory("nul").appendingPathExtension("sqlite").path)
        try database.execute("CREATE TABLE t (v TEXT)")
        for text in ["\u{0}xyz", "a\u{0}b", "", "plain", "é\u{0}"] {
            try database.run("DELETE FROM t")
            try database.run("INSERT INTO t VALUES (?)", text)
            #expect(try database.first("SELECT v, length(CAST(v AS BLOB)) AS n FROM t")?.decodeIfPresent("v", as: String.self) == text)
        }
    }
}
