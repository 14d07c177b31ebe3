import Foundation

/// Brings a database to the newest schema: each pending migration in order, exactly once,
/// in its own IMMEDIATE transaction together with its record, so a failure leaves nothing
/// half-applied (the GRDB DatabaseMigrator's discipline).
public enum Migrator {
    /// Reads `NNNN_name.sql` files from a folder, in version order. Errors name the folder or
    /// file and the system's reason.
    public static func load(from directory: String) throws(MigrationError) -> [Migration] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            let reason = access(directory, R_OK) == 0 ? "it is not a folder" : String(cString: strerror(errno))
            throw MigrationError(fileName: directory, reason: "the migrations folder cannot be read (\(reason))")
        }
        let names = entries.filter { $0.hasSuffix(".sql") }.sorted()
        guard !names.isEmpty else { throw MigrationError(fileName: directory, reason: "the folder holds no NNNN_name.sql file") }
        var migrations: [Migration] = []
        for fileName in names {
            let stem = fileName.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]), version > 0 else {
                throw MigrationError(fileName: fileName, reason: "the name is not NNNN_name.sql")
            }
            guard let data = FileManager.default.contents(atPath: directory + "/" + fileName),
                  let sql = String(data: data, encoding: .utf8) else {
                throw MigrationError(fileName: fileName, reason: "it cannot be read as UTF-8 text in \(directory)")
            }
            if let previous = migrations.last, previous.version == version {
                throw MigrationError(fileName: fileName, reason: "version \(version) also used by \(previous.fileName)")
            }
            migrations.append(Migration(version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql))
        }
        return migrations
    }

    /// Applies what is pending; returns the migrations it applied.
    @discardableResult
    public static func migrate(_ database: Database, _ migrations: [Migration]) throws(MigrationError) -> [Migration] {
        do {
            try database.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))
                """)
        } catch {
            throw MigrationError(fileName: "schema_migrations", reason: error.message)
        }
        var applied: [Migration] = []
        for migration in migrations.sorted(by: { $0.version < $1.version }) {
            do {
                if try database.first("SELECT 1 FROM schema_migrations WHERE version = ?", migration.version) != nil { continue }
                if try apply(migration, to: database) { applied.append(migration) }
            } catch let error as MigrationError {
                throw error
            } catch let error as SQLiteError {
                throw MigrationError(fileName: migration.fileName, reason: error.message)
            } catch {
                throw MigrationError(fileName: migration.fileName, reason: "\(error)")
            }
        }
        return applied
    }

    /// One migration by SQLite's procedure for schema changes (sqlite.org/lang_altertable.html,
    /// "Making Other Kinds Of Table Schema Changes"): foreign keys off outside the transaction
    /// (inside one the pragma does nothing), so that rebuilding a table (create the new one,
    /// copy, drop the old, rename) does not cascade its children away; `foreign_key_check`
    /// before the commit, a violation rolling the migration back; foreign keys on again.
    /// False when another process applied it meanwhile.
    private static func apply(_ migration: Migration, to database: Database) throws -> Bool {
        let enforced = try database.first("PRAGMA foreign_keys")?.decodeIfPresent(0, as: Int.self) == 1
        if enforced { try database.execute("PRAGMA foreign_keys = OFF") }
        defer { if enforced { try? database.execute("PRAGMA foreign_keys = ON") } }
        return try database.transaction {
            // Checked inside the write lock: two processes migrating at once apply each step once.
            guard try database.first("SELECT 1 FROM schema_migrations WHERE version = ?", migration.version) == nil else { return false }
            try database.execute(migration.sql)
            let violations = try database.query("PRAGMA foreign_key_check")
            if let first = violations.first {
                let table = try first.decodeIfPresent(0, as: String.self) ?? "?", parent = try first.decodeIfPresent(2, as: String.self) ?? "?"
                throw MigrationError(fileName: migration.fileName, reason: """
                    it leaves \(violations.count) row(s) whose foreign key points at nothing, the first in table \(table) \
                    (referencing \(parent)); it was rolled back: fix the migration so that every row keeps its parent
                    """)
            }
            try database.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", migration.version, migration.name)
            return true
        }
    }

    /// The versions applied so far.
    public static func appliedVersions(_ database: Database) throws -> [Int] {
        try database.query("SELECT version FROM schema_migrations ORDER BY version").map { try $0.decode(0, as: Int.self) }
    }
}
