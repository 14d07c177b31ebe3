import NTLogging
import NTPostgresDB
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTSQLiteDB
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// The database toursd keeps its rows in, as its deployment says: SQLite in the data directory
/// (the embedded default), or PostgreSQL (several daemons sharing one state). Opened and
/// brought to the newest schema of its dialect.
enum ServerStorage {
    /// `connections`: the pool's (SQLite's readers, PostgreSQL's transaction connections); nil,
    /// the configuration's for the database. `serving`: the server's event loops will read
    /// (SQLite opens a connection for each); false for a command-line tool.
    static func open(_ records: Deployment.Records, _ settings: StorageSettings, logger: Logger, connections: Int? = nil,
                     serving: Bool = true, migrating: Bool = true) async throws(StartupError) -> any SQLStorage {
        let migrations = try SyncService.migrations(records, settings)
        switch records {
        case .sqlite(let path):
            try StartupError.makeDirectories(settings.dataDir)
            let pool: DatabasePool
            do {
                pool = try DatabasePool(path: path, readerCount: connections ?? settings.sqliteReaders, loopReaderCount: serving ? settings.eventLoops : 0,
                                        fileCheckSeconds: settings.databaseFileCheckSeconds, optimizeSeconds: settings.sqliteOptimizeSeconds)
            } catch {
                throw StartupError("cannot open the database in \(settings.dataDir): \(error)")
            }
            if migrating {
                try await applied(logger) { try await pool.withWriter { db in try Migrator.migrate(db, migrations) } }
                do { try await pool.optimize() } catch { logger.warn("the planner's statistics could not be refreshed", ["error": "\(error)"]) }
            }
            return SQLiteStorage(pool)
        case .postgres(let url):
            let storage = PostgresStorage(url: url, transactionConnections: connections ?? settings.databasePoolSize, handlerCount: settings.databaseHandlerThreads,
                                          statementTimeoutSeconds: settings.databaseStatementTimeoutSeconds, probeSeconds: settings.retryAfterSeconds)
            if migrating { try await applied(logger) { try await storage.withConnection { try PostgresMigrator.migrate($0, migrations) } } }
            return storage
        }
    }

    /// Runs a migration, logging what it applied; a failure names the file.
    private static func applied(_ logger: Logger, _ migrate: () async throws -> [Migration]) async throws(StartupError) {
        do {
            for migration in try await migrate() { logger.info("migration applied", ["file": migration.fileName]) }
        } catch let error as MigrationError {
            throw StartupError(error.description)
        } catch {
            throw StartupError("migration failed: \(error)")
        }
    }
}
