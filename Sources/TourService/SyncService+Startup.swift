#if canImport(Glibc)
import Glibc
#endif
import Foundation
import APIModel
import Logging
import SQLiteDB

extension StartupError {
    /// `mkdir -p`, a failure said in the system's words and naming the folder (Foundation's
    /// would be an NSCocoaErrorDomain dump). Each folder it makes is made durable (its parent
    /// fsynced): a data directory that vanished with a power cut would take the database along.
    static func makeDirectories(_ path: String) throws(StartupError) {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            let parent = built.isEmpty ? "/" : built
            built += "/" + part
            if mkdir(built, 0o700) == 0 {
                do {
                    try BlobStore.syncDirectory(parent)
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

    /// After a crash: no temporary file, and no file without its row.
    func recover() throws(StartupError) {
        let temporary = context.blobs.removeTemporaryFiles()
        var orphans = 0
        do {
            // One query for every name the rows use, not one per file found.
            var stored = context.blobs.allKeys()
            // Another daemon on the same database may be between placing a file and committing
            // its row: with a shared database only files older than the grace can be orphans.
            if !context.config.databaseUrl.isEmpty {
                let cutoff = time(nil) - context.config.orphanGraceSeconds
                stored = stored.filter { key in
                    var info = stat()
                    return stat(context.blobs.path(key), &info) == 0 && info.st_mtim.tv_sec <= cutoff
                }
            }
            let kinds = Set(stored.map(\.kind))
            let named = Set(try context.pool.readBlocking { try StoredFiles.named(by: $0, kinds: kinds) })
            for key in stored where !named.contains(key) {
                context.blobs.removeNow(key)
                orphans += 1
            }
        } catch {
            throw StartupError("cannot check stored files against the database: \(error)")
        }
        if temporary + orphans > 0 {
            context.logger.info("removed files left by an interrupted write", ["temporary": String(temporary), "orphans": String(orphans)])
        }
    }

    /// On a first start, a tenant and a token so that a newcomer can call the API at once.
    func bootstrapToken() throws(StartupError) {
        let path = context.config.dataDir + "/admin.token"
        do {
            let made = try context.pool.writeBlocking { db -> String? in
                guard try !TenantStore.hasTokens(db) else { return nil }
                return try TenantStore.createToken(db, tenant: "default").token
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
