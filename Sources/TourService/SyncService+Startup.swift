#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ObjectStorage
import APIModel
import Logging
import SQLiteDB

extension StartupError {
    /// `mkdir -p`, a failure said in the system's words and naming the folder (Foundation's
    /// would be an NSCocoaErrorDomain dump). Each folder it makes is made durable (its parent
    /// fsynced): a data directory that vanished with a power cut would take the database along.
    public static func makeDirectories(_ path: String) throws(StartupError) {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            let parent = built.isEmpty ? "/" : built
            built += "/" + part
            if mkdir(built, 0o700) == 0 {
                do {
                    try Disk.syncDirectory(parent)
                } catch {
                    throw StartupError("cannot make \(built) durable: \(error.message)")
                }
            } else if errno != EEXIST {
                throw StartupError("cannot create \(path) (\(built): \(String(cString: strerror(errno))))")
            }
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            throw StartupError("cannot create \(path): something that is not a folder is in the way")
        }
    }
}

/// What runs before toursd listens: migrations, the sweep of files a crash left, the first
/// token. These may block (they use the database's blocking calls); nothing on a request's
/// way does.
extension SyncService {
    /// The migrations to apply: those built in for the database's dialect, or those of
    /// `migrationsDir` when it is set.
    static func migrations(_ config: ToursdConfig) throws(StartupError) -> [Migration] {
        guard !config.migrationsDir.isEmpty else { return config.databaseUrl.isEmpty ? ServerMigrations.sqlite : ServerMigrations.postgresql }
        do {
            return try Migrator.load(from: config.migrationsDir)
        } catch {
            throw StartupError("\(error.description); leave migrationsDir empty to use the migrations built into toursd")
        }
    }

    /// After a crash: no temporary file, and (in the blob folder) no file without its row.
    /// Never removes files the database cannot account for (`OrphanSweep`): then toursd
    /// refuses to start.
    func recover() throws(StartupError) {
        let temporary = context.blobs.incoming.removeLeftovers()
        let folder = context.blobs as? DirectoryBlobStore
        let stored = folder?.allKeys() ?? []
        let named: Set<BlobKey>
        let databaseIsNew: Bool
        do {
            // One query for every name the rows use, not one per file found.
            // Panoramas always: the previews' and tiles' folders are checked against them.
            let kinds = Set(stored.map(\.kind)).union([.panorama])
            (named, databaseIsNew) = try context.pool.readBlocking { db in
                (Set(try await StoredFiles.named(by: db, kinds: kinds)), !(try await TenantStore.hasTokens(db)))
            }
        } catch {
            throw StartupError("cannot check stored files against the database: \(error)")
        }
        if let folder {
            try removeOrphans(from: folder, stored: stored, named: named, databaseIsNew: databaseIsNew)
        }
        if temporary > 0 {
            context.logger.warn("removed files left by an interrupted write", ["temporary": String(temporary)])
        }
        let derived = context.previews.sweep(keeping: Set(named.filter { $0.kind == .panorama }))
        if derived > 0 {
            context.logger.warn("removed previews and tiles left by an interrupted deletion or making", ["removed": String(derived)])
        }
    }

    /// The blob folder's files no row names.
    private func removeOrphans(from folder: DirectoryBlobStore, stored: Set<BlobKey>, named: Set<BlobKey>, databaseIsNew: Bool) throws(StartupError) {
        let config = context.config
        var orphans = stored.subtracting(named)
        // Another daemon on the same database may be between placing a file and committing
        // its row: with a shared database only files older than the grace can be orphans.
        if !config.databaseUrl.isEmpty {
            let cutoff = time(nil) - config.orphanGraceSeconds
            orphans = orphans.filter { key in
                var info = stat()
                return stat(folder.path(key), &info) == 0 && info.st_mtim.tv_sec <= cutoff
            }
        }
        let sweep = OrphanSweep(storedFiles: stored.count, orphans: orphans.count, databaseIsNew: databaseIsNew, limit: config.orphanSweepLimit)
        if let refusal = sweep.refusal(database: config.databaseUrl.isEmpty ? "\(config.dataDir)/toursd.sqlite" : "the PostgreSQL database of databaseUrl",
                                       blobFolder: config.blobFolder) {
            throw StartupError(refusal)
        }
        for key in orphans { folder.removeNow(key) }
        if !orphans.isEmpty {
            context.logger.warn("removed files without their rows", ["orphans": String(orphans.count)])
        }
    }

    /// On a first start, a tenant and a token so that a newcomer can call the API at once.
    func bootstrapToken() throws(StartupError) {
        let path = context.config.dataDir + "/admin.token"
        do {
            let made = try context.pool.writeBlocking { db -> String? in
                guard try await !TenantStore.hasTokens(db) else { return nil }
                return try await TenantStore.createToken(db, tenant: "default").token
            }
            guard let token = made else { return }
            try Self.writePrivateFile(path, line: token)
            context.logger.info("created tenant default; its bearer token is in the file", ["file": path])
        } catch let error as StartupError {
            throw error
        } catch {
            throw StartupError("cannot create the first token: \(error)")
        }
    }
}

extension SyncService {
    /// This daemon's id, made once and kept in its data directory (`instance.id`): names its
    /// own folders in shared places.
    static func instanceId(_ config: ToursdConfig) throws(StartupError) -> String {
        let path = config.dataDir + "/instance.id"
        if let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8),
           let id = try? Identifier.checked(text.trimmingCharacters(in: .whitespacesAndNewlines), "instance.id") {
            return id
        }
        let id = Identifier.make()
        try writePrivateFile(path, line: id)
        return id
    }

    /// A one-line file its owner alone may read (mode 0600), fsynced.
    static func writePrivateFile(_ path: String, line text: String) throws(StartupError) {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StartupError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let line = Array((text + "\n").utf8)
        guard write(fd, line, line.count) == line.count, fsync(fd) == 0 else {
            throw StartupError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// Whether the start-up sweep may remove the stored files no row names. A crash between
/// placing a file and committing its row leaves a few; a database that cannot account for the
/// files at all (new beside a blob folder that holds files: a restore that forgot it, a volume
/// mounted without it, a `databaseUrl` naming an empty database) would make every stored file
/// look like one. Then nothing is removed and toursd does not start. Pure.
struct OrphanSweep: Equatable {
    var storedFiles: Int
    var orphans: Int
    /// The database has no token yet: made by this start, or never used.
    var databaseIsNew: Bool
    var limit: Int

    /// Why toursd must not start, in words naming the case and the way out; nil: go on.
    func refusal(database: String, blobFolder: String) -> String? {
        if databaseIsNew && storedFiles > 0 {
            return "the database (\(database)) is new, but \(blobFolder) holds \(storedFiles) stored files: the database that goes with "
                + "them is missing. Restore it (or point dataDir or databaseUrl at it) and start again; to start afresh instead, move "
                + "\(blobFolder) aside. Nothing was removed."
        }
        if orphans > limit {
            return "\(orphans) stored files in \(blobFolder) have no row in the database (\(database)), more than orphanSweepLimit "
                + "(\(limit)): the database cannot account for them (restored from an older copy, or another deployment's). Restore the "
                + "database that goes with them; if the files are truly not needed, move them aside or raise orphanSweepLimit. Nothing was removed."
        }
        return nil
    }
}

extension SyncService {
    /// The bucket `blobStore` names, with the AWS environment; nil for the blob folder.
    static func bucketSettings(_ config: ToursdConfig, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StartupError) -> BucketSettings? {
        do {
            return try BucketSettings.resolve(blobStore: config.blobStore, endpoint: config.s3Endpoint, region: config.s3Region,
                                              pathStyle: config.s3PathStyle, environment: environment)
        } catch {
            throw StartupError(error.description)
        }
    }
}
