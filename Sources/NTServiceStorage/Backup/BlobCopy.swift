#if canImport(Glibc)
import Glibc
import NTSQLKit
#endif
import NTServiceModel
import Foundation
import NTHashing
import NTObjectStorage

/// `toursd blobs copy`: every blob the database names, between the blob folder and a bucket,
/// either way, each checked by its digest. A blob already at the destination with those bytes
/// is left as it is, so a second run after the daemons stop copies only what came meanwhile.
/// An unfinished upload's acknowledged bytes are its partial file in the folder and its
/// segments in the bucket (`BucketPartial`).
package enum BlobCopy {
    package struct Outcome: Equatable, Sendable {
        package var copied = 0
        package var present = 0
        package var bytes: Int64 = 0
        /// What could not be copied, and why: nothing of it was taken as copied.
        package var problems: [String] = []
    }

    /// The largest object one PUT may carry (S3's limit).
    static let maxObjectBytes: Int64 = 5 << 30

    /// `--to s3://…`: each file checked three times: against its row (a file that changed on
    /// disk is reported, not copied), by the request (its SHA-256 signed: the store refuses
    /// bytes that changed on the way), and read back from the bucket. An upload's acknowledged
    /// bytes become its first segment.
    package static func intoBucket(_ entries: [BucketBackup.Entry], from folder: String, to bucket: BucketTransfer) -> Outcome {
        tally(entries) { entry throws(CopyProblem) in try copy(entry, from: folder, to: bucket) }
    }

    /// `--from s3://…`: each object fetched into a file of the folder's `.incoming/blobs-copy`,
    /// checked against its row's digest, made durable and then renamed into place (a file there
    /// with other bytes is replaced: no row names those). An upload's segments become its
    /// partial file. One run at a time per folder (a lock the system lets go when the run
    /// ends, however it ends): a second would clear the first's files.
    package static func intoFolder(_ entries: [BucketBackup.Entry], from bucket: BucketTransfer, to folder: String) throws(StartupError) -> Outcome {
        let incoming = folder + "/.incoming/blobs-copy"
        do throws(StorageError) {
            for directory in [folder, folder + "/.incoming"] { try Disk.makeDirectory(directory) }
        } catch {
            throw StartupError("cannot prepare \(folder)/.incoming: \(error.message)")
        }
        let lock = open(incoming + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw StartupError("cannot open \(incoming).lock: \(String(cString: strerror(errno)))") }
        defer { close(lock) }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            throw StartupError("another blobs copy --from is copying into \(folder); let it finish, then run this again")
        }
        // What a run that was stopped left half-fetched.
        try? FileManager.default.removeItem(atPath: incoming)
        defer { try? FileManager.default.removeItem(atPath: incoming) }
        do throws(StorageError) {
            try Disk.makeDirectory(incoming)
        } catch {
            throw StartupError("cannot prepare \(incoming): \(error.message)")
        }
        return tally(entries) { entry throws(CopyProblem) in try fetch(entry, from: bucket, to: folder, through: incoming) }
    }

    /// Runs `copy` on each entry (true: copied, false: there already) and counts.
    private static func tally(_ entries: [BucketBackup.Entry], _ copy: (BucketBackup.Entry) throws(CopyProblem) -> Bool) -> Outcome {
        var outcome = Outcome()
        for entry in entries {
            do throws(CopyProblem) {
                if try copy(entry) {
                    outcome.copied += 1
                    outcome.bytes += entry.size
                } else {
                    outcome.present += 1
                }
            } catch {
                outcome.problems.append("\(entry.name): \(error.description)")
            }
        }
        return outcome
    }

    struct CopyProblem: Error, CustomStringConvertible {
        let description: String
    }

    private static func isUpload(_ entry: BucketBackup.Entry) -> Bool { entry.name.contains("/uploads/") }

    /// True when copied, false when the bucket had these bytes already.
    private static func copy(_ entry: BucketBackup.Entry, from folder: String, to bucket: BucketTransfer) throws(CopyProblem) -> Bool {
        let upload = isUpload(entry)
        let target = upload ? BucketPartial.segmentName(entry.name, start: 0) : entry.name
        let path = "\(folder)/\(entry.name)"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CopyProblem(description: "\(path) cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard entry.size <= maxObjectBytes else { throw CopyProblem(description: "\(entry.size) bytes: more than one PUT carries") }
        let local = try fileDigest(fd, path, length: entry.size)
        if !entry.sha256.isEmpty, local != entry.sha256 {
            throw CopyProblem(description: "the file has sha-256 \(local), not the \(entry.sha256) its row records: not copied")
        }
        return try asProblem { () throws -> Bool in
            if let there = try bucket.head(target), there.size == entry.size, try digest(of: target, in: bucket) == local { return false }
            guard entry.size > 0 || !upload else { return true } // an upload with nothing acknowledged has no segment
            try bucket.put(target, .file(fd: fd, offset: 0, length: entry.size, sha256: local), contentType: "application/octet-stream")
            let copied = try digest(of: target, in: bucket)
            guard copied == local else { throw CopyProblem(description: "the bucket's copy reads back with sha-256 \(copied), not \(local)") }
            return true
        }
    }

    /// True when fetched, false when the folder had these bytes already.
    private static func fetch(_ entry: BucketBackup.Entry, from bucket: BucketTransfer, to folder: String,
                              through incoming: String) throws(CopyProblem) -> Bool {
        let path = "\(folder)/\(entry.name)"
        let kept = localDigest(path, length: entry.size)
        if !isUpload(entry), kept == entry.sha256 { return false }
        return try asProblem { () throws -> Bool in
            // An object, or an upload's segments from offset 0 up to its acknowledged bytes.
            let pieces: [(key: String, size: Int64)]
            if isUpload(entry) {
                pieces = BucketPartial.chain(try bucket.list(entry.name + "/"), below: entry.name, length: entry.size).map { ($0.key, $0.size) }
            } else {
                guard let there = try bucket.head(entry.name) else { throw CopyProblem(description: "the bucket has no such object") }
                pieces = [(entry.name, there.size)]
            }
            let held = pieces.reduce(0) { $0 + $1.size }
            guard held == entry.size else { throw CopyProblem(description: "the bucket holds \(held) of its \(entry.size) bytes") }
            let file = try CopyFile(path: "\(incoming)/\(ByteEncoding.hex(randomBytes(12)))")
            defer { file.discard() }
            for piece in pieces {
                try file.fill { sink in try bucket.get(piece.key, range: 0..<piece.size, into: sink) }
            }
            guard file.size == entry.size else { throw CopyProblem(description: "the bucket sent \(file.size) of its \(entry.size) bytes") }
            // An upload's row has no digest: the folder's partial file counts when it holds
            // the bucket's bytes.
            let expected = isUpload(entry) || entry.sha256.isEmpty ? file.fetchedSHA256 : entry.sha256
            if kept == expected { return false }
            let directory = (path as NSString).deletingLastPathComponent
            try Disk.makeDirectory((directory as NSString).deletingLastPathComponent)
            try Disk.makeDirectory(directory)
            try file.sync()
            try file.keep(as: path, sha256: expected)
            try Disk.syncDirectory(directory)
            return true
        }
    }

    /// The SHA-256 of a folder's file's first `length` bytes; nil when it has fewer or none.
    private static func localDigest(_ path: String, length: Int64) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, Int64(info.st_size) >= length else { return nil }
        return try? fileDigest(fd, path, length: length)
    }

    private static func fileDigest(_ fd: Int32, _ path: String, length: Int64) throws(CopyProblem) -> String {
        do {
            return try FileDigest.sha256(fd, offset: 0, length: length)
        } catch {
            throw CopyProblem(description: "\(path): \(error.message)")
        }
    }

    /// Runs `body`, any error it throws as the entry's problem.
    private static func asProblem<T>(_ body: () throws -> T) throws(CopyProblem) -> T {
        do {
            return try body()
        } catch let error as CopyProblem {
            throw error
        } catch let error as StorageError {
            throw CopyProblem(description: error.message)
        } catch {
            throw CopyProblem(description: "\(error)")
        }
    }

    /// An object's SHA-256, read back whole.
    private static func digest(of name: String, in bucket: BucketTransfer) throws -> String {
        let digest = StreamingDigest(.sha256)
        try bucket.get(name, range: nil) { bytes in
            digest.update(bytes)
            return true
        }
        return ByteEncoding.hex(digest.finish())
    }
}
