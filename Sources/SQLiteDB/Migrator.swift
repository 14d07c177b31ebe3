import Foundation

/// One schema step: `NNNN_name.sql`.
public struct Migration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// The file name it came from.
    public var fileName: String { String(format: "%04d_%@.sql", version, name) }
}

/// A migration that failed, naming its file; the database is left as it was before it.
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    public let fileName: String
    public let reason: String
    public var description: String { "migration \(fileName) failed: \(reason)" }
}

/// Brings a database to the newest schema: each pending migration in order, exactly once,
/// in its own IMMEDIATE transaction together with its record, so a failure leaves nothing
/// half-applied (the GRDB DatabaseMigrator's discipline).
public enum Migrator {
    /// Reads `NNNN_name.sql` files from a folder, in version order.
    public static func load(from directory: String) throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }.sorted()
        var migrations: [Migration] = []
        for fileName in names {
            let stem = fileName.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]), version > 0 else {
                throw MigrationError(fileName: fileName, reason: "the name is not NNNN_name.sql")
            }
            let sql = try String(contentsOfFile: directory + "/" + fileName, encoding: .utf8)
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
                try database.transaction {
                    // Checked inside the write lock: two processes migrating at once apply each step once.
                    guard try database.first("SELECT 1 FROM schema_migrations WHERE version = ?", migration.version) == nil else { return }
                    try database.execute(migration.sql)
                    try database.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", migration.version, migration.name)
                    applied.append(migration)
                }
            } catch let error as SQLiteError {
                throw MigrationError(fileName: migration.fileName, reason: error.message)
            } catch {
                throw MigrationError(fileName: migration.fileName, reason: "\(error)")
            }
        }
        return applied
    }

    /// The versions applied so far.
    public static func appliedVersions(_ database: Database) throws(SQLiteError) -> [Int] {
        try database.query("SELECT version FROM schema_migrations ORDER BY version").compactMap { $0[0].int }
    }
}
