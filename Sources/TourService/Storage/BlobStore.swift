#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Foundation
import Hashing

/// Names a stored file: a panorama's bytes or a floor's world map.
struct BlobKey: Hashable, Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case panorama = "panoramas"
        case worldMap = "worldmaps"
        /// The partial file of a resumable upload.
        case upload = "uploads"
    }

    var tenant: Int64
    var kind: Kind
    var id: String
}

/// Files under the data directory: `blobs/<tenant>/<kind>/<id>`, written first to `tmp/`.
/// A file is in its final place, fsynced with its directory, before any row points at it, so
/// a crash leaves at worst a file with no row (removed at start-up), never a row without its
/// file. Ids reach paths only after `Identifier` validation.
final class BlobStore: Sendable {
    let root: String
    private var temporaryDirectory: String { root + "/tmp" }

    init(root: String) throws(ServiceError) {
        self.root = root
        for directory in [root, root + "/blobs", root + "/tmp"] {
            try Self.makeDirectory(directory)
        }
    }

    func path(_ key: BlobKey) -> String {
        "\(root)/blobs/\(key.tenant)/\(key.kind.rawValue)/\(key.id)"
    }

    /// A new temporary file to stream into.
    func makeIncoming() throws(ServiceError) -> IncomingBlob {
        var random = SystemRandomNumberGenerator()
        let name = ByteEncoding.hex((0..<12).map { _ in UInt8.random(in: .min ... .max, using: &random) })
        return try IncomingBlob(path: "\(temporaryDirectory)/\(name).part")
    }

    /// Moves a synced temporary file into its final place and makes the rename durable.
    func commit(_ incoming: IncomingBlob, as key: BlobKey) throws(ServiceError) {
        let directory = "\(root)/blobs/\(key.tenant)/\(key.kind.rawValue)"
        try Self.makeDirectory("\(root)/blobs/\(key.tenant)")
        try Self.makeDirectory(directory)
        guard rename(incoming.path, path(key)) == 0 else { throw Self.failure("rename", errno) }
        incoming.markCommitted()
        try Self.syncDirectory(directory)
    }

    /// Creates an upload's empty partial file (durably), or opens the existing one.
    func openPartial(_ key: BlobKey) throws(ServiceError) -> Int32 {
        let directory = "\(root)/blobs/\(key.tenant)/\(key.kind.rawValue)"
        try Self.makeDirectory("\(root)/blobs/\(key.tenant)")
        try Self.makeDirectory(directory)
        let existed = access(path(key), F_OK) == 0
        let fd = open(path(key), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("open \(path(key))", errno) }
        if !existed {
            do throws(ServiceError) { try Self.syncDirectory(directory) } catch { close(fd); throw error }
        }
        return fd
    }

    /// Moves a finished partial file into its final place as another key, durably.
    func move(_ from: BlobKey, to key: BlobKey) throws(ServiceError) {
        let directory = "\(root)/blobs/\(key.tenant)/\(key.kind.rawValue)"
        try Self.makeDirectory("\(root)/blobs/\(key.tenant)")
        try Self.makeDirectory(directory)
        guard rename(path(from), path(key)) == 0 else { throw Self.failure("rename", errno) }
        try Self.syncDirectory(directory)
    }

    /// Removes a stored file; a missing file is not an error (a crash may have done it).
    func remove(_ key: BlobKey) {
        unlink(path(key))
    }

    /// Removes temporary files left by a crash; returns how many.
    @discardableResult
    func removeTemporaryFiles() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory)) ?? []
        for name in names { unlink("\(temporaryDirectory)/\(name)") }
        return names.count
    }

    /// Every stored file's key, for the orphan sweep.
    func allKeys() -> [BlobKey] {
        var keys: [BlobKey] = []
        let tenants = (try? FileManager.default.contentsOfDirectory(atPath: root + "/blobs")) ?? []
        for tenantName in tenants {
            guard let tenant = Int64(tenantName) else { continue }
            for kind in BlobKey.Kind.allCases {
                let ids = (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/blobs/\(tenantName)/\(kind.rawValue)")) ?? []
                keys += ids.map { BlobKey(tenant: tenant, kind: kind, id: $0) }
            }
        }
        return keys
    }

    private static func makeDirectory(_ path: String) throws(ServiceError) {
        if mkdir(path, 0o700) == 0 {
            // The new entry must survive a crash too.
            try syncDirectory((path as NSString).deletingLastPathComponent)
        } else if errno != EEXIST {
            throw failure("mkdir \(path)", errno)
        }
    }

    static func syncDirectory(_ path: String) throws(ServiceError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw failure("open \(path)", errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("fsync \(path)", errno) }
    }

    /// A full disk is 507 (nothing partial is kept); anything else is a 500.
    static func failure(_ what: String, _ code: Int32) -> ServiceError {
        if code == ENOSPC || code == EDQUOT {
            return ServiceError(.insufficientStorage, "the server's disk is full")
        }
        return ServiceError(.internal, "\(what): \(String(cString: strerror(code)))")
    }
}

/// A file being received: written and hashed as bytes arrive, never read back. Removed when
/// released unless committed. One owner at a time.
final class IncomingBlob: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let digest = StreamingDigest(.sha256)
    private(set) var size: Int64 = 0
    /// Bytes already handed to the disk with sync_file_range.
    private var writebackStarted: Int64 = 0
    /// Writeback starts every this many bytes, so the disk works while the body arrives and
    /// the final fsync finds little left: acknowledging durably costs almost nothing extra.
    private static let writebackStep: Int64 = 1 << 20
    /// Committed, or discarded: no longer this object's to remove.
    private var committed = false

    fileprivate init(path: String) throws(ServiceError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BlobStore.failure("create \(path)", errno) }
    }

    deinit {
        close(fd)
        discard()
    }

    /// Removes the file unless it was committed; safe to call more than once.
    func discard() {
        guard !committed else { return }
        committed = true
        unlink(path)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ServiceError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw BlobStore.failure("write", errno)
            }
            offset += written
        }
        digest.update(bytes)
        size += Int64(bytes.count)
        if size - writebackStarted >= Self.writebackStep {
            _ = nt_start_writeback(fd, writebackStarted, size - writebackStarted) // a hint: fsync decides
            writebackStarted = size
        }
    }

    /// Flushes the bytes to disk; returns the SHA-256 of everything written.
    func sync() throws(ServiceError) -> [UInt8] {
        guard fsync(fd) == 0 else { throw BlobStore.failure("fsync", errno) }
        return digest.finish()
    }

    fileprivate func markCommitted() { committed = true }
}
