#if canImport(Glibc)
import Glibc
#endif
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks
import Foundation
import NTObjectStorage
import NTAPIModel
import NTLogging
import NTSQLiteDB
import NTHashing

/// What runs before toursd listens: migrations, the sweep of files a crash left, the first
/// token. These may block on files (start-up runs on a thread of its own,
/// `ThreadPool.onThreadOfItsOwn`); nothing on a request's way does.
extension SyncService {
    /// The migrations to apply: those built in for the database's dialect, or those of
    /// `migrationsDir` when it is set.
    static func migrations(_ records: Deployment.Records, _ settings: StorageSettings) throws(StartupError) -> [Migration] {
        guard settings.migrationsDir.isEmpty else { return try Self.migrations(in: settings.migrationsDir) }
        switch records {
        case .sqlite: return ServerMigrations.sqlite
        case .postgres: return ServerMigrations.postgresql
        }
    }

    private static func migrations(in folder: String) throws(StartupError) -> [Migration] {
        do {
            return try Migrator.load(from: folder)
        } catch {
            throw StartupError("\(error.description); leave migrationsDir empty to use the migrations built into toursd")
        }
    }

    /// After a crash: no temporary file, and (in the blob folder) no file without its row.
    /// Never removes anything from a store this database does not own (`StoreOwnership`, also
    /// claimed here on a first start), nor more orphans than `orphanSweepLimit`: then toursd
    /// refuses to start.
    func recover() async throws(StartupError) {
        let temporary = store.incoming.removeLeftovers()
        let folder: DirectoryBlobStore? = if case .folder(let folder) = blobs { folder } else { nil }
        let stored = folder?.allKeys() ?? []
        let named: Set<BlobKey>
        do {
            // One query for every name the rows use, not one per file found.
            // Panoramas always: the previews' and tiles' folders are checked against them.
            let kinds = Set(stored.map(\.kind)).union([.panorama])
            named = try await records.pool.read { db in Set(try await StoredFiles.named(by: db, kinds: kinds)) }
        } catch {
            throw StartupError("cannot check stored files against the database: \(error)")
        }
        switch blobs {
        case .folder(let folder):
            try claim(folder, stored: stored, named: named)
            try removeOrphans(from: folder, stored: stored, named: named)
        case .bucket(let bucket):
            try await claim(bucket)
            try checkRestored(bucket)
        }
        if temporary > 0 {
            logger.warn("removed files left by an interrupted write", ["temporary": String(temporary)])
        }
        let derived = images.previews.sweep(keeping: Set(named.filter { $0.kind == .panorama }))
        if derived > 0 {
            logger.warn("removed previews and tiles left by an interrupted deletion or making", ["removed": String(derived)])
        }
    }

    /// A database restored from `toursd backup` comes with its `blobs.manifest`, put in the data
    /// directory: every object it names must be in the bucket with its size (removed since the
    /// backup, it is restored from the bucket's versions first), else toursd does not start,
    /// naming them. Checked, the manifest is renamed `blobs.manifest.checked`.
    private func checkRestored(_ bucket: BucketBlobStore) throws(StartupError) {
        let path = config.dataDir + "/" + BucketBackup.manifestName
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        guard let entries = BucketBackup.entries(manifest: text) else { throw StartupError("\(path) is not a manifest toursd backup wrote") }
        var missing: [String] = []
        do {
            let transfer = try bucket.bucket.transfer()
            for entry in entries {
                do {
                    try BucketBackup.check(entry, in: transfer)
                } catch let problem as StartupError {
                    missing.append(problem.message)
                }
            }
        } catch {
            throw StartupError("the restored database's objects cannot be checked in the bucket: \(error)")
        }
        guard missing.isEmpty else {
            throw StartupError("the bucket lacks \(missing.count) of the \(entries.count) objects the restored database names (restore their versions first, "
                               + "or remove \(path) to start without them):\n" + missing.prefix(10).joined(separator: "\n"))
        }
        guard rename(path, path + ".checked") == 0 else { throw StartupError("cannot rename \(path): \(String(cString: strerror(errno)))") }
        logger.always(.info, "the restored database's objects are all in the bucket", ["objects": String(entries.count)])
    }

    /// The database's name in what an operator is told.
    private var databaseName: String { deployment.records.name }

    /// The blob folder is this deployment's, or made so; else toursd does not start.
    private func claim(_ folder: DirectoryBlobStore, stored: Set<BlobKey>, named: Set<BlobKey>) throws(StartupError) {
        let path = folder.blobs + "/" + StoreOwnership.claimName
        let claimed = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        switch StoreOwnership.decide(database: deploymentId, store: claimed, holdsBlobs: !stored.isEmpty,
                                     databaseNamesSome: !stored.isDisjoint(with: named), describing: config.blobFolder,
                                     databaseName: databaseName) {
        case .owned: return
        case .refused(let reason): throw StartupError(reason)
        case .claim:
            try PrivateFile.write(path, line: deploymentId)
            do {
                try Disk.syncDirectory(folder.blobs)
            } catch {
                throw StartupError("cannot make \(path) durable: \(error.message)")
            }
        }
    }

    /// The bucket is this deployment's, or made so; another's, or credentials it refuses, and
    /// toursd does not start. A store away now is checked again by each round of its sweep,
    /// which removes nothing until it is.
    private func claim(_ bucket: BucketBlobStore) async throws(StartupError) {
        let (records, databaseName, deploymentId) = (records, databaseName, deploymentId)
        let ownership: StoreOwnership
        do {
            ownership = try await bucket.ownership(deployment: deploymentId, databaseName: databaseName) { keys in
                try await records.read { !(try await StoredFiles.named(among: keys, by: $0)).isEmpty }
            }
        } catch let error as ObjectStoreError {
            guard case .unavailable = error else {
                throw StartupError("the bucket \(bucket.bucket.settings.bucket) cannot be used: \(error.awayReason ?? error.description)")
            }
            logger.warn("the bucket cannot be asked whose it is now; its sweep removes nothing until it can", ["error": "\(error)"])
            return
        } catch {
            throw StartupError("cannot check whose the bucket \(bucket.bucket.settings.bucket) is: \(error)")
        }
        if case .refused(let reason) = ownership { throw StartupError(reason) }
    }

    /// The blob folder's files no row names, older than the grace with a shared database.
    private func removeOrphans(from folder: DirectoryBlobStore, stored: Set<BlobKey>, named: Set<BlobKey>) throws(StartupError) {
        let config = config
        var orphans = stored.subtracting(named)
        // Another daemon on the same database may be between placing a file and committing
        // its row: with a shared database only files older than the grace can be orphans.
        if deployment.spansDaemons {
            let cutoff = time(nil) - config.orphanGraceSeconds
            orphans = orphans.filter { key in
                var info = stat()
                return stat(folder.path(key), &info) == 0 && info.st_mtim.tv_sec <= cutoff
            }
        }
        let sweep = OrphanSweep(storedFiles: stored.count, orphans: orphans.count, limit: config.orphanSweepLimit)
        if let refusal = sweep.refusal(database: databaseName, blobFolder: config.blobFolder) {
            throw StartupError(refusal)
        }
        for key in orphans { folder.removeNow(key) }
        if !orphans.isEmpty {
            logger.warn("removed files without their rows", ["orphans": String(orphans.count)])
        }
    }

    /// On a first start, a tenant and a token so that a newcomer can call the API at once.
    func bootstrapToken() async throws(StartupError) {
        let path = config.dataDir + "/admin.token"
        do {
            let made = try await records.pool.write { db -> String? in
                guard try await !TenantStore.hasTokens(db) else { return nil }
                return try await TenantStore.createToken(db, tenant: "default", at: self.clock.now()).token
            }
            guard let token = made else { return }
            try PrivateFile.write(path, line: token)
            logger.info("created tenant default; its bearer token is in the file", ["file": path])
        } catch let error as StartupError {
            throw error
        } catch {
            throw StartupError("cannot create the first token: \(error)")
        }
    }
}

extension SyncService {
    /// The database's deployment id (`DeploymentStore`), made by its first start.
    static func deploymentId(_ pool: any SQLStorage) async throws(StartupError) -> String {
        do {
            return try await pool.write { try await DeploymentStore.id($0, proposing: Identifier.make()) }
        } catch {
            throw StartupError("cannot read the database's deployment id: \(error)")
        }
    }

    /// This daemon's webhook key is the deployment's (the first daemon's, recorded by its
    /// check), or the start is refused: with another, it could open none of the endpoints'
    /// secrets, and the uploads the other daemons began would be 404 here.
    static func checkKey(_ key: SecretBox, _ pool: any SQLStorage, _ settings: StorageSettings) async throws(StartupError) {
        let mine = WebhookKey.check(key)
        let recorded: String
        do {
            recorded = try await pool.write { try await DeploymentStore.keyCheck($0, recording: mine) }
        } catch {
            throw StartupError("cannot read the deployment's key check: \(error)")
        }
        guard recorded == mine else {
            throw StartupError("the webhook key \(WebhookKey.path(settings)) is not the one this deployment's daemons use (the first one's): give every "
                               + "daemon the same webhookKeyFile. If the deployment's key was lost and every daemon now reads this one, run "
                               + "`toursd deployment set-key` (every webhook endpoint then needs a new secret, and unfinished uploads their creation again)")
        }
    }

    /// This daemon's id, made once and kept in its data directory (`instance.id`): names its
    /// own folders in shared places.
    static func instanceId(_ dataDir: String) throws(StartupError) -> String {
        let path = dataDir + "/instance.id"
        if let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8),
           let id = try? Identifier.checked(text.trimmingCharacters(in: .whitespacesAndNewlines), "instance.id") {
            return id
        }
        let id = Identifier.make()
        try PrivateFile.write(path, line: id)
        return id
    }
}

/// Whether a sweep may remove the stored files no row names, in a store this database owns
/// (`StoreOwnership`). A crash between placing a file and committing its row leaves a few; a
/// database that cannot account for many (restored from an older copy, say) would make them
/// look like orphans. Then nothing is removed. Pure.
struct OrphanSweep: Equatable {
    var storedFiles: Int
    var orphans: Int
    var limit: Int

    /// Why nothing may be removed, in words naming the case and the way out; nil: go on.
    func refusal(database: String, blobFolder: String) -> String? {
        guard orphans > limit else { return nil }
        return "\(orphans) stored files in \(blobFolder) have no row in the database (\(database)), more than orphanSweepLimit "
            + "(\(limit)): the database cannot account for them (restored from an older copy, or another deployment's). Restore the "
            + "database that goes with them; if the files are truly not needed, move them aside or raise orphanSweepLimit. Nothing was removed."
    }
}
