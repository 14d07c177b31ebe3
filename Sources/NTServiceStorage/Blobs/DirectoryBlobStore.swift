#if canImport(Glibc)
import Glibc
import NTSQLKit
#endif
import NTServiceModel
import NTThreadPools
import CNTLinux
import Foundation
import NTHashing

/// Files under the data directory: `blobs/<tenant>/<kind>/<name>`, received first into
/// `tmp/`. Every file is durable and in its final place before the transaction that makes a
/// row point at it, and is placed only where nothing is (`RENAME_NOREPLACE`), so the row's
/// commit is the single switch: a crash leaves at worst a file with no row (removed at
/// start-up), never a row without its file, and no committed file is ever overwritten.
/// Replaceable files (world maps) get a fresh name each time for that reason.
///
/// Every call that touches the disk runs on the I/O pool (`io`); the synchronous ones are for
/// start-up and for jobs already on that pool. Ids reach paths only after `Identifier`
/// validation.
package final class DirectoryBlobStore: BlobStore {
    /// The blob folder (`blobDir`): `<tenant>/<kind>/<name>`.
    package let blobs: String
    package let io: ThreadPool
    /// On the blob folder's file system (a rename places what it received).
    package let incoming: IncomingFolder

    package init(blobs: String, temporaryDirectory: String, io: ThreadPool) throws(StorageError) {
        self.blobs = blobs
        self.io = io
        incoming = IncomingFolder(path: temporaryDirectory, io: io, destination: .folder)
        for directory in [blobs, (temporaryDirectory as NSString).deletingLastPathComponent, temporaryDirectory] {
            try Disk.makeDirectory(directory)
        }
    }

    /// A disk error is the request's (a 500, a full disk 507): the folder is never "away".
    package var unavailableReason: String? { nil }
    package var metrics: String { "" }

    package func stop() { io.stop() }

    package func path(_ key: BlobKey) -> String {
        StoredFiles(blobs: blobs).path(key)
    }

    private func directory(_ key: BlobKey) -> String {
        "\(blobs)/\(key.tenant)/\(key.kind.rawValue)"
    }

    // MARK: Request paths (async, on the I/O pool)

    package func receive(_ body: some ByteStream, toward key: BlobKey) async throws -> ReceivedBlob {
        try await incoming.receive(body)
    }

    package func place(_ received: ReceivedBlob, as key: BlobKey) async throws -> Bool {
        try await io.run { [self] in
            guard try placeNow(from: received.file.path, as: key) else { return false }
            received.file.markPlaced()
            return true
        }
    }

    /// A hard link, durable: the partial name stays until the commit. The file is cut to its
    /// length first (its marks go), durably: the panorama is that file.
    package func finish(partial: BlobKey, length: Int64, as key: BlobKey) async throws -> Bool {
        try await io.run { [self] () throws(StorageError) -> Bool in
            let fd = open(path(partial), O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { throw Disk.failure("open \(path(partial))", errno) }
            defer { close(fd) }
            guard ftruncate(fd, off_t(length)) == 0 else { throw Disk.failure("ftruncate", errno) }
            guard fdatasync(fd) == 0 else { throw Disk.failure("fdatasync", errno) }
            return try placeNow(from: path(partial), as: key, keepingSource: true)
        }
    }

    package func remove(_ keys: [BlobKey]) async {
        _ = try? await io.run { [self] in
            for key in keys { unlink(path(key)) }
        }
    }

    package func openForReading(_ key: BlobKey, sha256: String, range: Range<Int64>, of size: Int64) async throws -> (fd: Int32, offset: Int64) {
        try await io.run { [self] in
            let fd = open(path(key), O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw StorageError(.failed, "\(key.kind.rawValue)/\(key.id) cannot be opened: \(String(cString: strerror(errno)))") }
            return (fd, range.lowerBound)
        }
    }

    package func localFile(_ key: BlobKey, sha256: String) async throws -> String {
        path(key)
    }

    package func readURL(_ key: BlobKey) -> String? { nil }

    package var partialsKeepTheirOffset: Bool { true }

    /// Creates an upload's empty partial file (durably), or opens the existing one.
    package func openPartial(_ key: BlobKey, recordedOffset: Int64, capacity: Int64) async throws -> any PartialBlob {
        try await io.run { [self] () throws(StorageError) -> PartialFile in
            try Disk.makeDirectory("\(blobs)/\(key.tenant)")
            try Disk.makeDirectory(directory(key))
            let existed = access(path(key), F_OK) == 0
            let fd = open(path(key), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw Disk.failure("open \(path(key))", errno) }
            if !existed {
                do throws(StorageError) { try Disk.syncDirectory(directory(key)) } catch { close(fd); throw error }
            }
            return try PartialFile(path: path(key), fd: fd, recordedOffset: recordedOffset, capacity: capacity)
        }
    }

    package func head(partial key: BlobKey) async throws -> [UInt8] {
        try await io.run { [self] () throws(StorageError) -> [UInt8] in
            let fd = open(path(key), O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Disk.failure("open \(path(key))", errno) }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: IncomingBlob.headLength)
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, IncomingBlob.headLength, 0) }
            guard read >= 0 else { throw Disk.failure("read \(path(key))", errno) }
            return Array(bytes.prefix(read))
        }
    }

    // MARK: On the I/O pool, or at start-up

    /// Gives `from` the name `key` unless taken, and makes the new entry durable: renamed, or
    /// linked when the source name is to stay (`keepingSource`).
    private func placeNow(from: String, as key: BlobKey, keepingSource: Bool = false) throws(StorageError) -> Bool {
        try Disk.makeDirectory("\(blobs)/\(key.tenant)")
        try Disk.makeDirectory(directory(key))
        var byLink = keepingSource
        if !keepingSource, nt_rename_noreplace(from, path(key)) != 0 {
            switch errno {
            case EEXIST: return false
            case EINVAL, ENOSYS: byLink = true // no RENAME_NOREPLACE here: link(2) fails the same way when taken
            default: throw Disk.failure("rename", errno)
            }
        }
        if byLink {
            guard Glibc.link(from, path(key)) == 0 else {
                if errno == EEXIST { return false }
                throw Disk.failure("link", errno)
            }
            if !keepingSource { unlink(from) }
        }
        try Disk.syncDirectory(directory(key))
        return true
    }

    /// Removes a stored file at once (start-up).
    package func removeNow(_ key: BlobKey) {
        unlink(path(key))
    }

    /// Every stored file's key, for the orphan sweep.
    package func allKeys() -> Set<BlobKey> {
        StoredFiles(blobs: blobs).keys()
    }
}
