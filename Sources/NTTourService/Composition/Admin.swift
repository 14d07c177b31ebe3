import Foundation
import NTAPIModel
import NTLogging
import NTObjectStorage
import NTPostgresDB
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTSQLiteDB
import NTSQLKit
import NTThreadPools
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// The operator's commands on a data directory: migrate, and manage tokens. Each opens the
/// database, brings it to the newest schema, and does its one thing.
public enum Admin {
    public struct Token: Sendable, Equatable {
        public let id: Int64
        public let tenant: String
        public let createdAt: String
        public let revoked: Bool
    }

    /// A migration and when it was applied (nil: pending).
    public struct MigrationState: Sendable, Equatable {
        public let fileName: String
        public let appliedAt: String?
    }

    /// What serve refuses of a configuration before it opens anything, found by the very checks
    /// serve makes, so that check-config and serve agree key by key: the migrations (built in,
    /// or `migrationsDir`'s), the bucket `blobStore` names with its credentials, and the webhook
    /// key when there is one. Each problem in words; none: serve goes on to open its stores.
    public static func refusals(_ config: ToursdConfig) -> [String] {
        var problems: [String] = []
        do throws(StartupError) { _ = try SyncService.migrations(Deployment.Records(config.storage), config.storage) } catch { problems.append(error.message) }
        do throws(StartupError) { _ = try Deployment(config.storage) } catch { problems.append(error.message) }
        do throws(StartupError) { try WebhookKey.checkShared(config.storage, spansDaemons: Deployment.Records(config.storage).spansDaemons) } catch { problems.append(error.message) }
        do throws(StartupError) { try WebhookKey.checkExisting(config.storage) } catch { problems.append(error.message) }
        return problems
    }

    /// What serve will meet once it opens its stores, tried from here (check-config): the
    /// database reached as the configured role, and that role allowed to make toursd's tables
    /// (or to use them, once made); the bucket reached with the endpoint and credentials serve
    /// would use, a probe object put and deleted. What was found, to print, and each problem.
    public static func reach(_ deployment: Deployment, _ config: ToursdConfig) -> (found: [String], problems: [String]) {
        var found: [String] = [], problems: [String] = []
        if case .postgres(let url) = deployment.records {
            do {
                let connection = try PostgresConnection(url: url)
                let row = try connection.first("""
                    SELECT current_user AS role, current_database() AS database,
                           has_schema_privilege('public', 'CREATE') AS can_create,
                           to_regclass('public.schema_migrations') IS NOT NULL AS migrated,
                           coalesce(has_table_privilege(to_regclass('public.schema_migrations'), 'INSERT'), false) AS can_write
                    FROM (SELECT 1) AS one
                    """)
                let role = try row?.decode("role", as: String.self) ?? "?", database = try row?.decode("database", as: String.self) ?? "?"
                let migrated = try row?.decode("migrated", as: Int.self) == 1
                let allowed = migrated ? try row?.decode("can_write", as: Int.self) == 1 : try row?.decode("can_create", as: Int.self) == 1
                found.append("database: reached as \(role), database \(database)\(migrated ? ", its tables made" : ", no tables yet")")
                if !allowed {
                    problems.append(migrated
                        ? "the role \(role) may not write toursd's tables in \(database) (they belong to another role)"
                        : "the role \(role) may not create tables in the public schema of \(database): make the database the role's (config/postgresql/toursd-database.sql)")
                }
            } catch {
                problems.append("the database is unavailable: \(error)")
            }
        }
        if case .bucket(let settings) = deployment.blobs {
            found.append("bucket: s3://\(settings.bucket)/\(settings.prefix) at \(settings.endpoint) (endpoint from \(settings.endpointSource)), region \(settings.region)")
            do {
                let timeouts = TransferTimeouts(connectMs: config.s3ConnectTimeoutMs, stallSeconds: config.s3StallSeconds)
                try BucketTransfer.open(settings, timeouts: timeouts).probe()
                found.append("bucket: a probe object put and deleted")
            } catch {
                problems.append(error.awayReason.map { "the bucket cannot be used: \($0)" } ?? "the bucket cannot be used: \(error)")
            }
        }
        return (found, problems)
    }

    /// Each migration, applied (when) or pending; applies none. Versions applied but unknown
    /// to this toursd (a newer one migrated the database) are listed too.
    public static func migrationStatus(_ config: ToursdConfig, logger: Logger) async throws(StartupError) -> [MigrationState] {
        let migrations = try SyncService.migrations(Deployment.Records(config.storage), config.storage)
        let applied: [Int: (name: String, at: String)] = try await withStorage(config, logger: logger, migrating: false) { pool async throws(StartupError) in
            do {
                return try await pool.read { db in
                    guard try await db.first(db.dialect.pick(sqlite: "SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'",
                                                       postgresql: "SELECT 1 FROM information_schema.tables WHERE table_name = 'schema_migrations'")) != nil else {
                        return [:]
                    }
                    let rows = try await db.query("SELECT version, name, applied_at FROM schema_migrations")
                    return Dictionary(uniqueKeysWithValues: try rows.map { (try $0.decode("version", as: Int.self), (try $0.decode("name", as: String.self), try $0.decode("applied_at", as: String.self))) })
                }
            } catch {
                throw StartupError("cannot read the applied migrations: \(error)")
            }
        }
        let known = Set(migrations.map(\.version))
        let unknown = applied.filter { !known.contains($0.key) }
            .map { Migration(version: $0.key, name: $0.value.name, sql: "") }
        return (migrations + unknown).sorted { $0.version < $1.version }
            .map { MigrationState(fileName: $0.fileName, appliedAt: applied[$0.version]?.at) }
    }

    /// Opens the database (migrated unless told not to), runs `body` on it, and stops it: a
    /// command's threads and connections end with the command. On a thread of its own, as
    /// start-up is: opening a database blocks, whoever the caller (a test's cooperative thread).
    private static func withStorage<T>(_ config: ToursdConfig, logger: Logger, migrating: Bool = true,
                                       _ body: (any SQLStorage) async throws(StartupError) -> T) async throws(StartupError) -> T {
        try await ThreadPool.onThreadOfItsOwn(named: "command") { () async throws(StartupError) -> T in
            let storage = try await ServerStorage.open(Deployment.Records(config.storage), config.storage, logger: logger, connections: 1,
                                                       serving: false, migrating: migrating)
            defer { storage.stop() }
            return try await body(storage)
        }
    }

    /// Applies pending migrations.
    public static func migrate(_ config: ToursdConfig, logger: Logger) async throws(StartupError) {
        try await withStorage(config, logger: logger) { _ in }
    }

    /// A consistent copy of the data directory into `destination` (Backup); returns what was
    /// linked, copied and dropped.
    public static func backup(_ config: ToursdConfig, to destination: String) throws(StartupError) -> BackupMade {
        let deployment = try Deployment(config.storage)
        if case .postgres(let url) = deployment.records {
            guard case .bucket(let settings) = deployment.blobs else {
                throw StartupError("with PostgreSQL and a shared blob folder, back up the database (pg_dump) and the folder; backup takes PostgreSQL with a bucket")
            }
            return .dump(objects: try PostgresBackup.run(url: url, to: destination, bucket: try connect(settings, config), webhookKey: WebhookKey.path(config.storage)))
        }
        switch deployment.blobs {
        case .bucket(let settings):
            return .manifest(objects: try BucketBackup.run(from: config.dataDir, to: destination, bucket: try connect(settings, config),
                                                           webhookKey: WebhookKey.path(config.storage)))
        case .folder(_, shared: true):
            throw StartupError("backup copies the embedded layout (SQLite and blobs in dataDir); with blobDir set, back up the database and the blob folder instead")
        case .folder(_, shared: false):
            let summary = try Backup.run(from: config.dataDir, to: destination)
            return .files(linked: summary.linked, copied: summary.copied, dropped: summary.dropped)
        }
    }

    /// `toursd blobs copy --to|--from s3://BUCKET/PREFIX`: the blobs the database `config`
    /// names, between the blob folder and the bucket (BlobCopy).
    public static func copyBlobs(_ config: ToursdConfig, _ direction: BlobCopyDirection, logger: Logger,
                                 environment: [String: String] = ProcessInfo.processInfo.environment) async throws(StartupError) -> BlobCopyOutcome {
        if case .intoBucket = direction, case .bucket = try Deployment(config.storage, environment: environment).blobs {
            throw StartupError("blobs copy --to takes the blobs of the blob folder (blobStore \"directory\"); this configuration's are in \(config.blobStore)")
        }
        let bucket: BucketSettings
        do {
            guard let settings = try BucketSettings.resolve(blobStore: direction.bucket, endpoint: config.s3Endpoint, region: config.s3Region,
                                                            pathStyle: config.s3PathStyle, environment: environment) else {
                throw StartupError("blobs copy takes a bucket, s3://BUCKET/PREFIX")
            }
            bucket = settings
        } catch let error as StartupError {
            throw error
        } catch {
            throw StartupError("\(error)")
        }
        let transfer = try connect(bucket, config)
        let entries = try await withStorage(config, logger: logger) { pool async throws(StartupError) in
            do {
                return try BucketBackup.entries(try await pool.read { db in
                    var rows: [[Row]] = []
                    for statement in BucketBackup.naming { rows.append(try await db.query(statement)) }
                    return rows
                })
            } catch {
                throw StartupError("cannot read what the database names: \(error)")
            }
        }
        let outcome = switch direction {
        case .intoBucket: BlobCopy.intoBucket(entries, from: config.blobFolder, to: transfer)
        case .intoFolder: try BlobCopy.intoFolder(entries, from: transfer, to: config.blobFolder)
        }
        return BlobCopyOutcome(copied: outcome.copied, present: outcome.present, bytes: outcome.bytes, problems: outcome.problems)
    }

    /// A connection to a bucket for a command, with `config`'s timeouts.
    private static func connect(_ settings: BucketSettings, _ config: ToursdConfig) throws(StartupError) -> BucketTransfer {
        do {
            return try BucketTransfer.open(settings, timeouts: TransferTimeouts(connectMs: config.s3ConnectTimeoutMs, stallSeconds: config.s3StallSeconds))
        } catch {
            throw StartupError("\(error)")
        }
    }

    /// What `blobs copy` did.
    public struct BlobCopyOutcome: Sendable, Equatable {
        public let copied: Int
        public let present: Int
        public let bytes: Int64
        public let problems: [String]
    }

    /// What a backup holds besides the database.
    public enum BackupMade: Sendable, Equatable {
        /// The blob folder's files: linked, copied, and those no row names left out.
        case files(linked: Int, copied: Int, dropped: Int)
        /// The manifest of the bucket's objects the rows name, each checked to be there.
        case manifest(objects: Int)
        /// PostgreSQL's dump and the manifest of the bucket's objects its rows name, of one
        /// snapshot.
        case dump(objects: Int)
    }

    /// `toursd deployment adopt`: the database becomes the deployment whose claim its blob
    /// store holds; returns the id it had and the one it has.
    public static func adoptDeployment(_ config: ToursdConfig, logger: Logger) async throws(StartupError) -> (before: String?, now: String) {
        let deployment = try Deployment(config.storage)
        let claim: String?
        switch deployment.blobs {
        case .folder(let path, _):
            claim = (try? String(contentsOfFile: path + "/" + StoreOwnership.claimName, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        case .bucket(let settings):
            do {
                claim = String(decoding: try connect(settings, config).get(StoreOwnership.claimName), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            } catch ObjectStoreError.notFound {
                claim = nil
            } catch {
                throw StartupError("the bucket cannot be asked whose it is: \(error)")
            }
        }
        guard let claim, !claim.isEmpty else {
            throw StartupError("the blob store holds no deployment's claim: there is nothing to adopt (toursd serve claims a store it may)")
        }
        let before = try await withStorage(config, logger: logger) { pool async throws(StartupError) in
            do {
                return try await pool.write { try await DeploymentStore.adopt($0, id: claim) }
            } catch {
                throw StartupError("cannot record the deployment: \(error)")
            }
        }
        logger.always(.warn, "the database is now the deployment its blob store belongs to", ["before": before ?? "none", "deployment": claim])
        return (before, claim)
    }

    /// `toursd deployment set-key`: the webhook key this configuration reads (made when
    /// missing) becomes the deployment's; returns where that key is.
    public static func setDeploymentKey(_ config: ToursdConfig, logger: Logger) async throws(StartupError) -> String {
        let key = try WebhookKey.load(config.storage, spansDaemons: Deployment.Records(config.storage).spansDaemons)
        try await withStorage(config, logger: logger) { pool async throws(StartupError) in
            do {
                try await pool.write { db in
                    _ = try await DeploymentStore.id(db, proposing: Identifier.make())
                    try await DeploymentStore.setKeyCheck(db, WebhookKey.check(key))
                }
            } catch {
                throw StartupError("cannot record the deployment's key: \(error)")
            }
        }
        logger.always(.warn, "the deployment's webhook key is now this one: every webhook endpoint needs a new secret", ["key": WebhookKey.path(config.storage)])
        return WebhookKey.path(config.storage)
    }

    /// A new token for the tenant (made when missing): shown here once, stored only hashed.
    public static func createToken(_ config: ToursdConfig, tenant: String, logger: Logger) async throws(StartupError) -> (id: Int64, token: String) {
        let name = tenant.trimmingCharacters(in: .whitespaces)
        guard (1...100).contains(name.count) else { throw StartupError("a tenant name is 1 to 100 characters") }
        return try await withStorage(config, logger: logger) { pool async throws(StartupError) in
            do {
                return try await pool.write { db in try await TenantStore.createToken(db, tenant: name, at: SystemClock().now()) }
            } catch {
                throw StartupError("cannot create the token: \(error)")
            }
        }
    }

    public static func tokens(_ config: ToursdConfig, logger: Logger) async throws(StartupError) -> [Token] {
        try await withStorage(config, logger: logger) { pool async throws(StartupError) in
            do {
                return try await pool.read { try await TenantStore.tokens($0) }
                    .map { Token(id: $0.id, tenant: $0.tenant, createdAt: $0.createdAt, revoked: $0.revokedAt != nil) }
            } catch {
                throw StartupError("cannot list tokens: \(error)")
            }
        }
    }

    /// Revokes a token at once: the running daemon reads tokens on every request.
    public static func revokeToken(_ config: ToursdConfig, id: Int64, logger: Logger) async throws(StartupError) {
        let revoked = try await withStorage(config, logger: logger) { pool async throws(StartupError) in
            do {
                return try await pool.write { db in try await TenantStore.revoke(db, id: id, at: SystemClock().now()) }
            } catch {
                throw StartupError("cannot revoke the token: \(error)")
            }
        }
        guard revoked else { throw StartupError("no unrevoked token with id \(id)") }
    }
}
