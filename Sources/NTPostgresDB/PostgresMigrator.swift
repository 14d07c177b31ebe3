import Foundation

/// Brings a PostgreSQL database to the newest schema: each pending migration in order, in its
/// own transaction together with its record, while this session holds an advisory lock, so
/// several daemons starting at the same moment apply each step exactly once (the others wait
/// for the lock, then find the steps applied).
public enum PostgresMigrator {
    /// The advisory lock's key: any constant the application keeps for itself ("ntmigr").
    static let lockKey: Int64 = 0x6E74_6D69_6772

    @discardableResult
    public static func migrate(_ connection: PostgresConnection, _ migrations: [Migration]) throws(MigrationError) -> [Migration] {
        do {
            _ = try connection.query("SELECT pg_advisory_lock(?)", arguments: [lockKey])
        } catch {
            throw MigrationError(fileName: "schema_migrations", reason: "the migration lock cannot be taken: \(error)")
        }
        defer { _ = try? connection.query("SELECT pg_advisory_unlock(?)", arguments: [lockKey]) }
        do {
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                """)
        } catch {
            throw MigrationError(fileName: "schema_migrations", reason: "\(error)")
        }
        var applied: [Migration] = []
        for migration in migrations.sorted(by: { $0.version < $1.version }) {
            do {
                if try connection.first("SELECT 1 FROM schema_migrations WHERE version = ?", migration.version) != nil { continue }
                try connection.execute("BEGIN")
                do {
                    try connection.execute(migration.sql)
                    try connection.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", migration.version, migration.name)
                    try connection.execute("COMMIT")
                } catch {
                    try? connection.execute("ROLLBACK")
                    throw error
                }
                applied.append(migration)
            } catch let error as PostgresError {
                throw MigrationError(fileName: migration.fileName, reason: error.message)
            } catch {
                throw MigrationError(fileName: migration.fileName, reason: "\(error)")
            }
        }
        return applied
    }
}
