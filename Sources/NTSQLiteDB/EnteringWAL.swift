import CNTSQLite

extension Database {
    /// `PRAGMA journal_mode=WAL`, waiting out another connection that is switching the same
    /// new database to WAL at that moment: SQLite answers that with SQLITE_BUSY at once, without
    /// its busy handler, so two processes opening a fresh database together (tours sync beside
    /// a capture) would fail. Bounded by the busy timeout. Only when a database is opened: at
    /// start-up, by the tools, in the client library; never on a request's way.
    func enterWAL(waitingAtMost milliseconds: Int32) throws(SQLiteError) {
        var waited: Int32 = 0
        while true {
            do {
                try execute("PRAGMA journal_mode=WAL")
                return
            } catch where error.code & 0xff == SQLITE_BUSY && waited < milliseconds {
                sqlite3_sleep(5)
                waited += 5
            }
        }
    }
}
