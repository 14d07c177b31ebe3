#if canImport(Glibc)
import Glibc
#endif
import NTServiceModel
import Foundation
import NTSQLiteDB

/// `toursd backup DEST`: a consistent copy of a data directory while its daemon serves,
/// uploads going on. `toursd serve --data-dir DEST` starts on it: every row has its file, and
/// everything acknowledged before the backup began is in it.
///
/// The order is what makes it consistent without stopping anyone:
/// 1. Every stored file is taken first. Panoramas and world maps never change once placed
///    (new bytes get a new name), so a hard link is a copy that costs nothing and keeps the
///    bytes even if the daemon deletes the name later; a resumable upload's partial file is
///    still written to, so it is copied (its bytes below a recorded offset never change).
/// 2. Then the database, through SQLite's online backup API: one snapshot.
/// 3. Files the snapshot names that step 1 did not see (placed meanwhile, before their row
///    committed) are taken now; files it does not name (deleted meanwhile, or never
///    committed) are dropped, as the start-up sweep would.
package enum Backup {
    package struct Summary: Equatable {
        package var linked = 0
        package var copied = 0
        package var dropped = 0
    }

    package static func run(from dataDir: String, to destination: String) throws(StartupError) -> Summary {
        let source = StoredFiles(blobs: dataDir + "/blobs")
        let target = StoredFiles(blobs: destination + "/blobs")
        guard FileManager.default.fileExists(atPath: dataDir + "/toursd.sqlite") else {
            throw StartupError("\(dataDir) holds no toursd database (toursd.sqlite): nothing to back up")
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: destination), !entries.isEmpty {
            throw StartupError("\(destination) is not empty: a backup goes into a new or empty folder")
        }
        var summary = Summary()
        try StartupError.makeDirectories(destination + "/blobs")
        do {
            for key in source.keys() { try take(key, from: source, to: target, &summary) }
            let database = try Database(path: dataDir + "/toursd.sqlite")
            try database.backup(to: destination + "/toursd.sqlite")
            let named = try Set(StoredFiles.named(by: Database(path: destination + "/toursd.sqlite"), kinds: Set(BlobKey.Kind.allCases)))
            for key in named.subtracting(target.keys()) {
                guard source.exists(key) else {
                    // Placed after step 1 and deleted after step 2: run again.
                    if key.kind == .upload { continue } // created after the backup began; it restarts at 0
                    throw StartupError("\(key.kind.rawValue)/\(key.id) was removed while the backup ran; run it again")
                }
                try take(key, from: source, to: target, &summary)
            }
            for key in target.keys() where !named.contains(key) {
                unlink(target.path(key))
                summary.dropped += 1
            }
            // The admin token, and the key webhook secrets are sealed under (without it the
            // copy's endpoints could not sign).
            for name in ["admin.token", WebhookKey.fileName] {
                guard let contents = FileManager.default.contents(atPath: dataDir + "/" + name) else { continue }
                guard FileManager.default.createFile(atPath: destination + "/" + name, contents: contents, attributes: [.posixPermissions: 0o600]) else {
                    throw StartupError("cannot write \(destination)/\(name)")
                }
            }
            try target.syncDirectories()
        } catch let error as StartupError {
            throw error
        } catch let error as StorageError {
            throw StartupError("the backup failed: \(error.message)")
        } catch {
            throw StartupError("the backup failed: \(error)")
        }
        return summary
    }

    /// Links a file that never changes (copies it across file systems); copies a partial one.
    private static func take(_ key: BlobKey, from source: StoredFiles, to target: StoredFiles, _ summary: inout Summary) throws(StorageError) {
        try target.makeDirectory(for: key)
        if key.kind != .upload {
            if link(source.path(key), target.path(key)) == 0 {
                summary.linked += 1
                return
            }
            guard errno == EXDEV || errno == EPERM else {
                if errno == ENOENT { return } // deleted meanwhile: step 3 decides
                throw Disk.failure("link \(source.path(key))", errno)
            }
        }
        guard try FileCopy.copy(source.path(key), to: target.path(key)) else { return }
        summary.copied += 1
    }
}

/// The `<tenant>/<kind>/<name>` tree of a blob folder (`blobDir`, by default a data
/// directory's `blobs/`), read and written directly (the backup runs beside the daemon, in a
/// process of its own).
package struct StoredFiles {
    /// The blob folder.
    let blobs: String

    func path(_ key: BlobKey) -> String { "\(blobs)/\(key.tenant)/\(key.kind.rawValue)/\(key.id)" }

    /// The files the database's rows name: panoramas, the floors' world maps, the partial
    /// files of uploads still receiving. Any other stored file is an orphan (start-up removes
    /// it, a backup leaves it out). Only `kinds` are asked for: the kinds of the files there
    /// are (a database a folder of older migrations made may lack the columns of the others).
    package static func named(by db: any SQLConnection, kinds: Set<BlobKey.Kind>) async throws -> [BlobKey] {
        let asked = namingQueries(kinds)
        return try zip(asked, try await db.queries(asked.map(\.statement))).flatMap { try keys(of: $0.kind, $1) }
    }

    /// `named(by:)` on a connection of this thread's (`toursd backup`, a tool of its own).
    package static func named(by db: Database, kinds: Set<BlobKey.Kind>) throws -> [BlobKey] {
        try namingQueries(kinds).flatMap { try keys(of: $0.kind, try db.query($0.statement.sql)) }
    }

    private static func namingQueries(_ kinds: Set<BlobKey.Kind>) -> [(kind: BlobKey.Kind, statement: SQLStatement)] {
        kinds.sorted { $0.rawValue < $1.rawValue }.map { kind in
            let sql = switch kind {
            case .panorama: "SELECT tenant_id, id FROM panoramas"
            case .worldMap: "SELECT tenant_id, coalesce(world_map_file, id) FROM floors WHERE world_map_sha256 IS NOT NULL"
            case .upload: "SELECT tenant_id, id FROM uploads WHERE state = 'receiving'"
            }
            return (kind, SQLStatement(sql))
        }
    }

    private static func keys(of kind: BlobKey.Kind, _ rows: [Row]) throws -> [BlobKey] {
        try rows.map { BlobKey(tenant: try $0.decode(0, as: Int64.self), kind: kind, id: try $0.decode(1, as: String.self)) }
    }

    func exists(_ key: BlobKey) -> Bool { access(path(key), F_OK) == 0 }

    func keys() -> Set<BlobKey> {
        var keys: Set<BlobKey> = []
        for tenantName in (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? [] {
            guard let tenant = Int64(tenantName) else { continue }
            for kind in BlobKey.Kind.allCases {
                for id in (try? FileManager.default.contentsOfDirectory(atPath: "\(blobs)/\(tenantName)/\(kind.rawValue)")) ?? [] {
                    keys.insert(BlobKey(tenant: tenant, kind: kind, id: id))
                }
            }
        }
        return keys
    }

    func makeDirectory(for key: BlobKey) throws(StorageError) {
        for directory in ["\(blobs)/\(key.tenant)", "\(blobs)/\(key.tenant)/\(key.kind.rawValue)"] {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else { throw Disk.failure("mkdir \(directory)", errno) }
        }
    }

    /// Every folder of the tree fsynced: the names in it survive a crash.
    func syncDirectories() throws(StorageError) {
        var folders = [(blobs as NSString).deletingLastPathComponent, blobs]
        for tenant in (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? [] {
            folders.append("\(blobs)/\(tenant)")
            for kind in BlobKey.Kind.allCases where access("\(blobs)/\(tenant)/\(kind.rawValue)", F_OK) == 0 {
                folders.append("\(blobs)/\(tenant)/\(kind.rawValue)")
            }
        }
        for folder in folders { try Disk.syncDirectory(folder) }
    }
}

/// A file's bytes into a new file, synced.
enum FileCopy {
    /// False when the source is gone (deleted meanwhile).
    static func copy(_ source: String, to destination: String) throws(StorageError) -> Bool {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            if errno == ENOENT { return false }
            throw Disk.failure("open \(source)", errno)
        }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw Disk.failure("create \(destination)", errno) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw Disk.failure("read \(source)", errno) }
            if count == 0 { break }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                if step < 0, errno == EINTR { continue }
                guard step > 0 else { throw Disk.failure("write \(destination)", errno) }
                written += step
            }
        }
        guard fsync(output) == 0 else { throw Disk.failure("fsync \(destination)", errno) }
        return true
    }
}
