#if canImport(Glibc)
import Glibc
#endif
import ThreadPools
import CLinux
import Foundation
import Hashing
import HTTPCore

/// Names a stored file: a panorama's bytes, a floor's world map, a resumable upload's part.
struct BlobKey: Hashable, Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case panorama = "panoramas"
        case worldMap = "worldmaps"
        /// The partial file of a resumable upload.
        case upload = "uploads"
    }

    var tenant: Int64
    var kind: Kind
    /// The file's name: a panorama's or upload's id; for a world map the name its floor row
    /// records (`worldMapFile`).
    var id: String
}

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
final class BlobStore: Sendable {
    /// The blob folder (`blobDir`): `<tenant>/<kind>/<name>`.
    let blobs: String
    let io: ThreadPool
    /// Where bodies are received before they are placed: on the blob folder's file system
    /// (a rename places them), and this daemon's alone (start-up empties it).
    let temporaryDirectory: String

    init(blobs: String, temporaryDirectory: String, io: ThreadPool) throws(ServiceError) {
        self.blobs = blobs
        self.temporaryDirectory = temporaryDirectory
        self.io = io
        for directory in [blobs, (temporaryDirectory as NSString).deletingLastPathComponent, temporaryDirectory] {
            try Self.makeDirectory(directory)
        }
    }

    func path(_ key: BlobKey) -> String {
        StoredFiles(blobs: blobs).path(key)
    }

    private func directory(_ key: BlobKey) -> String {
        "\(blobs)/\(key.tenant)/\(key.kind.rawValue)"
    }

    // MARK: Request paths (async, on the I/O pool)

    /// Receives a request body into a new temporary file: each batch written and hashed on the
    /// I/O pool as it arrives, never held whole, then fsynced. The file goes unless placed.
    func receive(_ body: RequestBody) async throws -> ReceivedBlob {
        let name = ByteEncoding.hex(randomBytes(12))
        let file = try await io.run { [temporaryDirectory] in try IncomingBlob(path: "\(temporaryDirectory)/\(name).part") }
        do {
            try await body.drain(on: io) { batch in try file.write(batch) }
            let digest = try await io.run { try file.sync() }
            return ReceivedBlob(file: file, sha256: ByteEncoding.hex(digest), head: file.head)
        } catch {
            await discard(file)
            throw error
        }
    }

    /// Puts a received file in place as `key`, durably (its directory fsynced); false when a
    /// file is there already (nothing is replaced; the received file stays the caller's).
    func place(_ received: ReceivedBlob, as key: BlobKey) async throws -> Bool {
        try await io.run { [self] in
            guard try placeNow(from: received.file.path, as: key) else { return false }
            received.file.markPlaced()
            return true
        }
    }

    /// Puts a received file in place under a name nobody else uses (a fresh random one);
    /// the received file is dropped if that fails.
    func store(_ received: ReceivedBlob, as key: BlobKey) async throws {
        do {
            guard try await place(received, as: key) else { throw ServiceError(.internal, "\(key.kind.rawValue)/\(key.id) exists already") }
        } catch {
            await discard(received)
            throw error
        }
    }

    /// Gives a finished resumable upload's file the name `key` too (a hard link, durable),
    /// keeping its partial name until the commit: a crash before it then loses nothing
    /// acknowledged. False when `key` is taken.
    func link(partial: BlobKey, as key: BlobKey) async throws -> Bool {
        try await io.run { [self] in try placeNow(from: path(partial), as: key, keepingSource: true) }
    }

    /// Removes a stored file (after the commit that stopped pointing at it); a missing file
    /// is not an error (a crash may have done it).
    func remove(_ keys: [BlobKey]) async {
        _ = try? await io.run { [self] in
            for key in keys { unlink(path(key)) }
        }
    }

    func remove(_ key: BlobKey) async {
        await remove([key])
    }

    /// Drops a received file nobody will place; gone before the answer says so.
    func discard(_ received: ReceivedBlob) async {
        await discard(received.file)
    }

    private func discard(_ file: IncomingBlob) async {
        do {
            try await io.run { file.discard() }
        } catch {
            file.discard() // the pool has stopped
        }
    }

    /// Opens a stored file for reading (sendfile); the caller owns the descriptor.
    func openForReading(_ key: BlobKey) async throws -> Int32 {
        try await io.run { [self] in
            let fd = open(path(key), O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ServiceError(.internal, "\(key.kind.rawValue)/\(key.id) cannot be opened: \(String(cString: strerror(errno)))") }
            return fd
        }
    }

    // MARK: On the I/O pool, or at start-up

    /// Gives `from` the name `key` unless taken, and makes the new entry durable: renamed, or
    /// linked when the source name is to stay (`keepingSource`).
    private func placeNow(from: String, as key: BlobKey, keepingSource: Bool = false) throws(ServiceError) -> Bool {
        try Self.makeDirectory("\(blobs)/\(key.tenant)")
        try Self.makeDirectory(directory(key))
        var byLink = keepingSource
        if !keepingSource, nt_rename_noreplace(from, path(key)) != 0 {
            switch errno {
            case EEXIST: return false
            case EINVAL, ENOSYS: byLink = true // no RENAME_NOREPLACE here: link(2) fails the same way when taken
            default: throw Self.failure("rename", errno)
            }
        }
        if byLink {
            guard Glibc.link(from, path(key)) == 0 else {
                if errno == EEXIST { return false }
                throw Self.failure("link", errno)
            }
            if !keepingSource { unlink(from) }
        }
        try Self.syncDirectory(directory(key))
        return true
    }

    /// Creates an upload's empty partial file (durably), or opens the existing one.
    func openPartial(_ key: BlobKey) throws(ServiceError) -> Int32 {
        try Self.makeDirectory("\(blobs)/\(key.tenant)")
        try Self.makeDirectory(directory(key))
        let existed = access(path(key), F_OK) == 0
        let fd = open(path(key), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("open \(path(key))", errno) }
        if !existed {
            do throws(ServiceError) { try Self.syncDirectory(directory(key)) } catch { close(fd); throw error }
        }
        return fd
    }

    /// A stored file's first `count` bytes (fewer when it is shorter).
    func head(_ key: BlobKey, count: Int = IncomingBlob.headLength) async throws -> [UInt8] {
        try await io.run { [self] () throws(ServiceError) -> [UInt8] in
            let fd = open(path(key), O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Self.failure("open \(path(key))", errno) }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: count)
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, 0) }
            guard read >= 0 else { throw Self.failure("read \(path(key))", errno) }
            return Array(bytes.prefix(read))
        }
    }

    /// Removes a stored file at once (start-up, and jobs on the pool).
    func removeNow(_ key: BlobKey) {
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
    func allKeys() -> Set<BlobKey> {
        StoredFiles(blobs: blobs).keys()
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

/// A received body: its fsynced temporary file and the file's SHA-256 (hex).
struct ReceivedBlob: Sendable {
    let file: IncomingBlob
    let sha256: String
    /// The file's first bytes (`IncomingBlob.headLength`): what its type is told by.
    let head: [UInt8]
    var size: Int64 { file.size }
}

/// A file being received: written and hashed as batches arrive, never read back. Used by one
/// task at a time, its calls made on the I/O pool. Removed when released unless placed.
final class IncomingBlob: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let digest = StreamingDigest(.sha256)
    private(set) var size: Int64 = 0
    /// The first `headLength` bytes, kept as they pass (never read back).
    private(set) var head: [UInt8] = []
    static let headLength = 16
    /// Bytes already handed to the disk with sync_file_range.
    private var writebackStarted: Int64 = 0
    /// Placed, or discarded: no longer this object's to remove.
    private var settled = false

    init(path: String) throws(ServiceError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BlobStore.failure("create \(path)", errno) }
    }

    private var isOpen = true

    deinit {
        discard()
        if isOpen { close(fd) }
    }

    /// Removes the file unless it was placed, and closes it (an unlinked file's space comes
    /// back only when it is closed: a full disk must have room again once this returns).
    /// Safe to call more than once.
    func discard() {
        guard !settled else { return }
        settled = true
        unlink(path)
        isOpen = false
        close(fd)
    }

    func markPlaced() { settled = true }

    /// Appends a batch and hashes it.
    func write(_ batch: [BodyChunk]) throws(ServiceError) {
        try FileWrites.write(fd, batch, at: size)
        for chunk in batch {
            chunk.withUnsafeBytes { bytes in
                digest.update(bytes)
                if head.count < Self.headLength { head += bytes.prefix(Self.headLength - head.count) }
            }
            size += Int64(chunk.count)
        }
        // Writeback starts as the body arrives, so the final fsync finds little left:
        // acknowledging durably costs almost nothing extra. A hint: fsync decides.
        if size - writebackStarted >= FileWrites.writebackStep {
            _ = nt_start_writeback(fd, writebackStarted, size - writebackStarted)
            writebackStarted = size
        }
    }

    /// Flushes the bytes to disk; returns the SHA-256 of everything written.
    func sync() throws(ServiceError) -> [UInt8] {
        guard fsync(fd) == 0 else { throw BlobStore.failure("fsync", errno) }
        return digest.finish()
    }
}

/// Writing batches of chunks to a file.
enum FileWrites {
    /// Writeback is started every this many bytes.
    static let writebackStep: Int64 = 1 << 20

    /// Writes the chunks one after another at `offset` (a short write continues where it
    /// stopped). One pwrite per chunk: a chunk is a whole socket read, so the calls are few
    /// next to the copying they do.
    static func write(_ fd: Int32, _ chunks: [BodyChunk], at offset: Int64) throws(ServiceError) {
        var position = offset
        for chunk in chunks {
            var written = 0
            while written < chunk.count {
                let count = chunk.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, $0.count - written, off_t(position)) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw BlobStore.failure("write", errno)
                }
                written += count
                position += Int64(count)
            }
        }
    }
}

/// Random bytes for names nobody can guess or collide with.
func randomBytes(_ count: Int) -> [UInt8] {
    var random = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &random) }
}
