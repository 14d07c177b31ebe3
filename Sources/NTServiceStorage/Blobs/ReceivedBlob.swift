#if canImport(Glibc)
import Glibc
import NTSQLKit
#endif
import NTServiceModel
import NTThreadPools
import CNTLinux
import Foundation
import NTHashing

/// The local folder bodies are received into before they are placed: this daemon's alone
/// (start-up empties it), on the blob folder's file system for the directory store (a rename
/// places them).
package struct IncomingFolder: Sendable {
    let path: String
    let io: ThreadPool
    let destination: IncomingBlob.Destination

    /// Receives a request body into a new temporary file: each batch written and hashed on the
    /// I/O pool as it arrives, never held whole, then fsynced after the last one. The file goes unless placed.
    /// `written`: told of the file after each batch, on the I/O pool (a bucket sends its full
    /// parts from there).
    func receive(_ body: some ByteStream, written: (@Sendable (IncomingBlob) -> Void)? = nil) async throws -> ReceivedBlob {
        let name = ByteEncoding.hex(randomBytes(12))
        let file = try await io.run { [path, destination] in try IncomingBlob(path: "\(path)/\(name).part", for: destination) }
        do {
            let digest = try await body.drain(on: io, { batch, last in
                try file.write(batch, last: last)
                written?(file)
            }, then: { try file.sync() })
            return ReceivedBlob(file: file, sha256: ByteEncoding.hex(digest), head: file.head)
        } catch {
            await discard(file)
            throw error
        }
    }

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

    /// Removes temporary files left by a crash (start-up); returns how many.
    @discardableResult
    package func removeLeftovers() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        for name in names { unlink("\(path)/\(name)") }
        return names.count
    }
}

/// Calls on files and folders shared by the stores.
package enum Disk {
    static func makeDirectory(_ path: String) throws(StorageError) {
        if mkdir(path, 0o700) == 0 {
            // The new entry must survive a crash too.
            try syncDirectory((path as NSString).deletingLastPathComponent)
        } else if errno != EEXIST {
            throw failure("mkdir \(path)", errno)
        }
    }

    package static func syncDirectory(_ path: String) throws(StorageError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw failure("open \(path)", errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("fsync \(path)", errno) }
    }

    /// A full disk is 507 (nothing partial is kept); anything else is a 500.
    static func failure(_ what: String, _ code: Int32) -> StorageError {
        if code == ENOSPC || code == EDQUOT {
            return StorageError(.full, "the server's disk is full")
        }
        return StorageError(.failed, "\(what): \(String(cString: strerror(code)))")
    }
}

/// A received body: its fsynced temporary file and the file's SHA-256 (hex).
package struct ReceivedBlob: Sendable {
    let file: IncomingBlob
    package let sha256: String
    /// The parts a bucket was sent while the body arrived, when it was (`StreamedParts`).
    var streamed: StreamedParts?
    /// The file's first bytes (`IncomingBlob.headLength`): what its type is told by.
    package let head: [UInt8]
    package var size: Int64 { file.size }
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
    private var writeback = Writeback(from: 0)
    /// Placed, or discarded: no longer this object's to remove.
    private var settled = false

    /// Where the file goes once received.
    enum Destination: Sendable {
        /// Renamed into the blob folder: made durable (fsynced) first.
        case folder
        /// Sent to a bucket in parts of this size: only read, once; each part hashed as it
        /// passes (the digest its request is signed with).
        case bucket(partSize: Int64)
    }

    private let destination: Destination
    /// With a bucket: the digests of its parts.
    private var parts: PartDigests?
    /// The digests of the parts written whole (hex).
    var partDigests: [String] { parts?.whole ?? [] }
    /// With a bucket, once synced: the digest of what follows the last whole part (hex).
    private(set) var lastPartDigest: String?

    init(path: String, for destination: Destination = .folder) throws(StorageError) {
        self.path = path
        self.destination = destination
        if case .bucket(let partSize) = destination { parts = PartDigests(partSize: partSize) }
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Disk.failure("create \(path)", errno) }
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

    /// Appends a batch (`last`: the body's last) and hashes it.
    func write(_ batch: [some ByteBuffer], last: Bool) throws(StorageError) {
        let end = try FileWrites.write(fd, batch, at: size)
        // Only a file the folder keeps is flushed: a bucket's is read once, then removed.
        if case .folder = destination { writeback.written(fd, upTo: end, last: last) }
        for chunk in batch {
            chunk.withUnsafeBytes { bytes in
                digest.update(bytes)
                if head.count < Self.headLength { head += bytes.prefix(Self.headLength - head.count) }
                parts?.add(bytes)
            }
            size += Int64(chunk.count)
        }
    }

    /// Flushes the bytes to disk (for the folder); returns the SHA-256 of everything written.
    func sync() throws(StorageError) -> [UInt8] {
        switch destination {
        case .folder:
            guard fsync(fd) == 0 else { throw Disk.failure("fsync", errno) }
        case .bucket:
            lastPartDigest = parts?.finish()
        }
        return digest.finish()
    }
}

/// The SHA-256 of each `partSize` part of a stream of bytes, taken as they pass.
struct PartDigests {
    let partSize: Int64
    /// The digests of the parts passed whole (hex).
    private(set) var whole: [String] = []
    private var current = StreamingDigest(.sha256)
    private var passed: Int64 = 0

    init(partSize: Int64) { self.partSize = partSize }

    /// The next bytes of the stream.
    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        var done = 0
        while done < bytes.count {
            let room = Int(partSize - passed % partSize)
            let piece = min(room, bytes.count - done)
            current.update(UnsafeRawBufferPointer(rebasing: bytes[done..<(done + piece)]))
            done += piece
            passed += Int64(piece)
            if piece == room {
                whole.append(ByteEncoding.hex(current.finish()))
                current = StreamingDigest(.sha256)
            }
        }
    }

    /// The digest of what followed the last whole part (of nothing, when none did).
    func finish() -> String {
        ByteEncoding.hex(current.finish())
    }
}

/// Writing batches of chunks to a file.
enum FileWrites {
    /// Writes the chunks one after another at `offset` (a short write continues where it
    /// stopped). One pwrite per chunk: a chunk is a whole socket read, so the calls are few
    /// next to the copying they do. Returns where the chunks end.
    @discardableResult
    static func write(_ fd: Int32, _ chunks: [some ByteBuffer], at offset: Int64) throws(StorageError) -> Int64 {
        var position = offset
        for chunk in chunks {
            var written = 0
            while written < chunk.count {
                let count = chunk.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, $0.count - written, off_t(position)) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw Disk.failure("write", errno)
                }
                written += count
                position += Int64(count)
            }
        }
        return position
    }
}

/// When the disk starts writing what a body put in a file (`sync_file_range`, without waiting:
/// a hint, the fsync decides what is durable): every `step` bytes as the body arrives, so that
/// the fsync at its end finds little left; and for the body's last batch at once, before it is
/// hashed, so that the disk writes it meanwhile (measured here: a 512 KiB piece written,
/// hashed and fdatasync'ed in 0.74 ms with its writeback started first, 1.05 ms without; 5 MiB
/// in 6.2 ms against 9.5). Not for every batch: bodies arriving together share the body budget
/// in small batches, and a writeback for each cost 32 concurrent uploads a sixth of their rate.
struct Writeback {
    static let step: Int64 = 1 << 20
    /// Bytes before this were handed to the disk already.
    private var started: Int64

    init(from offset: Int64) {
        started = offset
    }

    /// After bytes up to `end` were written: starts the disk writing what is due.
    mutating func written(_ fd: Int32, upTo end: Int64, last: Bool) {
        guard let range = due(upTo: end, last: last) else { return }
        _ = nt_start_writeback(fd, range.lowerBound, range.upperBound - range.lowerBound)
    }

    /// What to hand to the disk after bytes up to `end` were written (`last`: the body's last
    /// batch, its flush follows); nil: nothing yet.
    mutating func due(upTo end: Int64, last: Bool) -> Range<Int64>? {
        guard end > started, last || end - started >= Self.step else { return nil }
        defer { started = end }
        return started..<end
    }

    /// The bytes past `offset` are forgotten (written over next).
    mutating func rewind(to offset: Int64) {
        started = min(started, offset)
    }
}

/// Random bytes for names nobody can guess or collide with.
package func randomBytes(_ count: Int) -> [UInt8] {
    var random = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &random) }
}
