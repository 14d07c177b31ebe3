import CNTSQLite

/// For `toursd backup`, a command of its own: it may wait out another process's lock.
extension Database {
    /// Copies the whole database to a new file at `path` with SQLite's online backup API: one
    /// consistent snapshot (a read transaction of this connection), while other connections
    /// and processes go on writing. The copy is synced when this returns.
    public func backup(to path: String) throws(SQLiteError) {
        let copy = try Database(path: path)
        guard let backup = sqlite3_backup_init(copy.handle, "main", handle, "main") else {
            throw SQLiteError(code: sqlite3_errcode(copy.handle), message: String(cString: sqlite3_errmsg(copy.handle)))
        }
        // All pages in one step: the snapshot cannot restart halfway. A lock held elsewhere
        // is waited out, boundedly.
        var result = SQLITE_OK
        for _ in 0..<100 {
            result = sqlite3_backup_step(backup, -1)
            guard result == SQLITE_BUSY || result == SQLITE_LOCKED else { break }
            sqlite3_sleep(50)
        }
        let finished = sqlite3_backup_finish(backup)
        guard result == SQLITE_DONE, finished == SQLITE_OK else {
            throw SQLiteError(code: result == SQLITE_DONE ? finished : result, message: String(cString: sqlite3_errmsg(copy.handle)))
        }
        // Into the database file itself, synced: the copy needs no WAL beside it.
        try copy.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
