import SQLiteDB

/// Failed viewer sign-ins by client address (`SignInLimiter`). Times are Unix seconds.
enum SignInFailureStore {
    /// The address's failures after `since`, oldest first.
    static func recent(_ db: any SQLConnection, _ address: [UInt8], since: Int64) throws -> [Int64] {
        try db.query("SELECT failed_at FROM sign_in_failures WHERE address = ? AND failed_at > ? ORDER BY failed_at",
                     Blob(address), since).compactMap { $0["failed_at"].int64 }
    }

    /// Records a failure at `now`, and forgets every failure (of any address) from `since` or
    /// before: the table holds one window's failures.
    static func record(_ db: any SQLConnection, _ address: [UInt8], now: Int64, forgetting since: Int64) throws {
        _ = try db.run("DELETE FROM sign_in_failures WHERE failed_at <= ?", since)
        _ = try db.run("INSERT INTO sign_in_failures (address, failed_at) VALUES (?, ?)", Blob(address), now)
    }

    static func clear(_ db: any SQLConnection, _ address: [UInt8]) throws {
        _ = try db.run("DELETE FROM sign_in_failures WHERE address = ?", Blob(address))
    }
}
