#if canImport(Glibc)
import Glibc
#endif
import NTServiceModel
import Foundation
import NTObjectStorage
import NTSQLiteDB
import NTSQLKit

/// `toursd backup DEST` with a bucket (and SQLite): the database, through SQLite's online
/// backup (one snapshot), and `blobs.manifest`, the objects its rows name, each with its size
/// and SHA-256, every one checked to be in the bucket. The bucket keeps the bytes: with its
/// versioning on, a restored database finds the objects of its manifest again even when toursd
/// removed them since (restore those versions first).
package enum BucketBackup {
    package struct Entry: Equatable {
        /// The object's name below the bucket's prefix.
        var name: String
        var size: Int64
        /// Lowercase hex; empty for an upload's segments (whose digest the upload's end takes).
        var sha256: String
    }

    /// The manifest's file, in a backup and, restored, in the data directory (`checkRestored`).
    package static let manifestName = "blobs.manifest"

    /// The manifest's lines: `name<TAB>size<TAB>sha256`, sorted, a header first.
    package static func manifest(_ entries: [Entry]) -> String {
        "# object\tsize\tsha256\n" + entries.sorted { $0.name < $1.name }.map { "\($0.name)\t\($0.size)\t\($0.sha256)\n" }.joined()
    }

    /// The entries of a manifest's text; nil when a line is not one.
    package static func entries(manifest text: String) -> [Entry]? {
        var entries: [Entry] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3, let size = Int64(fields[1]) else { return nil }
            entries.append(Entry(name: String(fields[0]), size: size, sha256: String(fields[2])))
        }
        return entries
    }

    /// The statements whose rows `entries` reads: panoramas, world maps, unfinished uploads.
    package static let naming = [
        "SELECT tenant_id, id, size, sha256 FROM panoramas",
        "SELECT tenant_id, coalesce(world_map_file, id), world_map_size, world_map_sha256 FROM floors WHERE world_map_sha256 IS NOT NULL",
        "SELECT tenant_id, id, \"offset\", '' FROM uploads WHERE state = 'receiving'",
    ]

    /// The blobs the rows of the `naming` statements name (in their order): panoramas, world
    /// maps, and the first `offset` bytes of unfinished uploads.
    package static func entries(_ rows: [[Row]]) throws -> [Entry] {
        try zip(["panoramas", "worldmaps", "uploads"], rows).flatMap { kind, rows in
            try rows.map { Entry(name: "\(try $0.decode(0, as: Int64.self))/\(kind)/\(try $0.decode(1, as: String.self))", size: try $0.decode(2, as: Int64.self), sha256: try $0.decode(3, as: String.self)) }
        }
    }

    package static func entries(of database: Database) throws -> [Entry] {
        try entries(try naming.map { try database.query($0) })
    }

    /// `webhookKey`: the key file the daemon reads. The copy of the database carries no
    /// deployment: restored, it is one of its own until `toursd deployment adopt` (beside the
    /// live one, it must not own the live one's bucket).
    package static func run(from dataDir: String, to destination: String, bucket: BucketTransfer, webhookKey: String) throws(StartupError) -> Int {
        guard FileManager.default.fileExists(atPath: dataDir + "/toursd.sqlite") else {
            throw StartupError("\(dataDir) holds no toursd database (toursd.sqlite): nothing to back up")
        }
        try prepare(destination)
        do {
            try Database(path: dataDir + "/toursd.sqlite").backup(to: destination + "/toursd.sqlite")
            let copy = try Database(path: destination + "/toursd.sqlite")
            try copy.execute("DELETE FROM deployment")
            let entries = try entries(of: copy)
            for entry in entries { try check(entry, in: bucket) }
            try PrivateFile.write(destination + "/" + manifestName, line: String(manifest(entries).dropLast()))
            try copyPrivate(dataDir + "/admin.token", to: destination + "/admin.token")
            try copyPrivate(webhookKey, to: destination + "/" + WebhookKey.fileName)
            return entries.count
        } catch let error as StartupError {
            throw error
        } catch {
            throw StartupError("the backup failed: \(error)")
        }
    }

    /// A backup's folder: made, or found empty.
    package static func prepare(_ destination: String) throws(StartupError) {
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: destination), !entries.isEmpty {
            throw StartupError("\(destination) is not empty: a backup goes into a new or empty folder")
        }
        try StartupError.makeDirectories(destination)
    }

    /// The file at `source`, when there is one, copied to `target` (0600).
    package static func copyPrivate(_ source: String, to target: String) throws(StartupError) {
        guard let contents = FileManager.default.contents(atPath: source) else { return }
        guard FileManager.default.createFile(atPath: target, contents: contents, attributes: [.posixPermissions: 0o600]) else {
            throw StartupError("cannot write \(target)")
        }
    }

    /// The entry's object is in the bucket with its size (an upload's segments hold its offset).
    package static func check(_ entry: Entry, in bucket: BucketTransfer) throws {
        if entry.name.contains("/uploads/") {
            let held = BucketPartial.chain(try bucket.list(entry.name + "/"), below: entry.name, length: entry.size).reduce(0) { $0 + $1.size }
            guard held == entry.size else { throw StartupError("the bucket holds \(held) of the \(entry.size) bytes of \(entry.name)") }
            return
        }
        guard let object = try bucket.head(entry.name) else { throw StartupError("the bucket has no \(entry.name), which the database names") }
        guard object.size == entry.size else { throw StartupError("\(entry.name) is \(object.size) bytes in the bucket, \(entry.size) in the database") }
    }
}
