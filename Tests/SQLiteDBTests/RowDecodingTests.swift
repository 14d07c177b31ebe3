import Testing
import NTSQLiteDB

/// docs/testing.md "Rows": a row's value is read as one Swift type or a `StorageError`
/// (`corrupt`) says why it cannot be; nothing ends the process, nothing becomes "" or 0.
@Suite struct RowDecodingTests {
    let row = Row(columns: ["id", "size", "ratio", "note", "bytes"],
                  values: [.text("p1"), .integer(42), .real(0.5), .null, .blob([1, 2])])

    @Test func valuesAreReadAsTheirTypes() throws {
        #expect(try row.decode("id", as: String.self) == "p1")
        #expect(try row.decode("size", as: Int.self) == 42)
        #expect(try row.decode("size", as: Int64.self) == 42)
        #expect(try row.decode("size", as: Double.self) == 42) // an integer is a number
        #expect(try row.decode("ratio", as: Double.self) == 0.5)
        #expect(try row.decode("bytes", as: [UInt8].self) == [1, 2])
        #expect(try row.decode(1, as: Int.self) == 42)
        #expect(try row.decodeIfPresent("note", as: String.self) == nil)
        #expect(try row.decodeIfPresent(3, as: String.self) == nil)
        #expect(try row.decode("note", as: SQLValue.self) == .null) // as stored, to bind again
    }

    @Test(arguments: [
        ("missing", "a row has no column missing (it has id, size, ratio, note, bytes)"),
        ("note", "column note is NULL where text must be"),
        ("size", "column size holds an integer where text must be"),
    ])
    func aValueThatIsNotThereOrOfAnotherTypeThrows(column: String, message: String) {
        #expect(throws: StorageError(.corrupt, message)) { try row.decode(column, as: String.self) }
    }

    @Test func decodeIfPresentStillRefusesAMissingColumnOrAnotherType() {
        #expect(throws: StorageError(.corrupt, "a row has no column gone (it has id, size, ratio, note, bytes)")) {
            try row.decodeIfPresent("gone", as: Int.self)
        }
        #expect(throws: StorageError(.corrupt, "column id holds text where an integer must be")) { try row.decodeIfPresent("id", as: Int.self) }
        #expect(throws: StorageError(.corrupt, "a row has no column #5 (it has 5)")) { try row.decode(5, as: Int.self) }
        #expect(throws: StorageError.self) { try row.decode(-1, as: Int.self) }
    }

    /// SQLite keeps what a column was given, whatever its declared type (no STRICT table): a
    /// value written wrong is refused on read, not taken for 0.
    @Test func aStoredValueOfAnotherTypeIsRefusedOnRead() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (n INTEGER NOT NULL); INSERT INTO t VALUES ('twelve')")
        let stored = try #require(try database.first("SELECT n FROM t"))
        #expect(throws: StorageError(.corrupt, "column n holds text where an integer must be")) { try stored.decode("n", as: Int.self) }
    }

    /// Each backend's own error says which kind of storage failure it is.
    @Test func sqliteErrorsSayTheirKind() {
        #expect(SQLiteError(code: 13, message: "database or disk is full").storageError.kind == .full) // SQLITE_FULL
        #expect(SQLiteError(code: 5, message: "database is locked").storageError.kind == .unavailable) // SQLITE_BUSY
        #expect(SQLiteError(code: 11, message: "database disk image is malformed").storageError.kind == .corrupt) // SQLITE_CORRUPT
        #expect(SQLiteError(code: 1, message: "no such table: x").storageError.kind == .failed)
        #expect(SQLiteError(code: 13 | (1 << 8), message: "full").storageError.kind == .full) // an extended code
    }
}
