import NTServiceModel
import NTSQLiteDB

/// Sign-in attempts by client address (`SignInLimiter`). Times are Unix seconds. Each attempt
/// is recorded when it is admitted, in the transaction that checks the limit, and forgotten
/// only when it succeeds: attempts racing each other count against one limit.
package enum SignInFailureStore {
    /// The address's attempts after `since`, oldest first.
    package static func recent(_ db: any SQLConnection, _ address: [UInt8], since: Int64) async throws -> [Int64] {
        try await db.query("SELECT failed_at FROM sign_in_failures WHERE address = ? AND failed_at > ? ORDER BY failed_at",
                     Blob(address), since).map { try $0.decode("failed_at", as: Int64.self) }
    }

    /// Records an attempt at `now`, and forgets every attempt (of any address) from `since` or
    /// before: the table holds one window's attempts.
    package static func record(_ db: any SQLConnection, _ address: [UInt8], now: Int64, forgetting since: Int64) async throws {
        _ = try await db.run("DELETE FROM sign_in_failures WHERE failed_at <= ?", since)
        _ = try await db.run("INSERT INTO sign_in_failures (address, failed_at) VALUES (?, ?)", Blob(address), now)
    }

    /// Forgets one attempt of the address made at `at` (one that succeeded): the others stay.
    package static func forget(_ db: any SQLConnection, _ address: [UInt8], at: Int64) async throws {
        _ = try await db.run(db.dialect.pick(
            sqlite: "DELETE FROM sign_in_failures WHERE rowid = (SELECT rowid FROM sign_in_failures WHERE address = ? AND failed_at = ? LIMIT 1)",
            postgresql: "DELETE FROM sign_in_failures WHERE ctid = (SELECT ctid FROM sign_in_failures WHERE address = ? AND failed_at = ? LIMIT 1)"),
            Blob(address), at)
    }
}
