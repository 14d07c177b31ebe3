#if canImport(Glibc)
import Glibc
import NTSQLKit
#endif
import NTServiceModel
import Foundation
import NTHashing
import Synchronization
import NTThreadPools

/// Local copies of a bucket's blobs, named by their SHA-256: what reads are sent from
/// (sendfile) and previews and tiles are made from. A name is its bytes, so a copy is never
/// stale and no daemon has anything to invalidate; each is checked against its digest as it
/// arrives (a store that returns other bytes is refused). Kept to `blobCacheBytes`, the least
/// recently used going first (a reader that has one open keeps reading it).
final class LocalCopies: Sendable {
    let folder: String
    private let limitBytes: Int64
    private let io: ThreadPool
    /// What the copies take, known once the folder was read (nil before): a copy added costs
    /// no listing unless it takes the folder past the limit.
    private let held = Mutex<Int64?>(nil)

    init(folder: String, limitBytes: Int64, io: ThreadPool) {
        self.folder = folder
        self.limitBytes = limitBytes
        self.io = io
    }

    /// At start-up (nothing fetches yet): removes what fetches a stop cut short left.
    func removeLeftovers() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix(".") {
            unlink("\(folder)/\(name)")
        }
    }

    /// The copy of the bytes of digest `sha256` when there is one (touched: in use).
    func existing(_ sha256: String) async throws -> String? {
        let path = "\(folder)/\(sha256)"
        return try await io.run({ utimensat(AT_FDCWD, path, nil, 0) == 0 }) ? path : nil
    }

    /// The copy of the bytes of digest `sha256`, fetched into a new file by `fetch` first
    /// when there is none.
    func path(of sha256: String, fetch: @Sendable (CopyFile) async throws -> Void) async throws -> String {
        let path = "\(folder)/\(sha256)"
        // A copy used is touched: the trim goes by age of last use.
        if let existing = try await existing(sha256) { return existing }
        let file = try await io.run { [folder] in try CopyFile(path: "\(folder)/.\(sha256).\(ByteEncoding.hex(randomBytes(6)))") }
        do {
            try await fetch(file)
            try await io.run { try file.keep(as: path, sha256: sha256) }
        } catch {
            file.discard()
            throw error
        }
        _ = try? await io.run { [self] in added(file.size, keeping: sha256) }
        return path
    }

    /// Takes the file at `path` (on the same file system) as the copy of digest `sha256`: a
    /// body just sent to the bucket is read from here, not fetched back. False when it could
    /// not be moved (the caller still owns it).
    func adopt(_ path: String, size: Int64, sha256: String) async -> Bool {
        let adopted = (try? await io.run { [folder] in rename(path, "\(folder)/\(sha256)") == 0 }) ?? false
        if adopted { _ = try? await io.run { [self] in added(size, keeping: sha256) } }
        return adopted
    }

    /// Counts a new copy; past the limit (or not yet known), trims the others.
    private func added(_ bytes: Int64, keeping name: String) {
        let total = held.withLock { held -> Int64? in
            held = held.map { $0 + bytes }
            return held
        }
        if total.map({ $0 > limitBytes }) ?? true { trim(keeping: name) }
    }

    /// Removes the least recently used copies past the limit (never `name`, the one just
    /// added: its reader opens it next), and notes what the rest take.
    private func trim(keeping name: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var copies: [(path: String, used: Int, size: Int64)] = []
        for entry in names where !entry.hasPrefix(".") {
            var info = stat()
            if stat("\(folder)/\(entry)", &info) == 0 {
                copies.append(("\(folder)/\(entry)", info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec, Int64(info.st_size)))
            }
        }
        var total = copies.reduce(0) { $0 + $1.size }
        for copy in copies.sorted(by: { $0.used < $1.used }) where total > limitBytes && copy.path != "\(folder)/\(name)" {
            unlink(copy.path)
            total -= copy.size
        }
        held.withLock { $0 = total }
    }
}

/// A copy being fetched: written and hashed as its bytes arrive (on the transfer thread that
/// receives them), then named by its digest.
final class CopyFile: @unchecked Sendable {
    private let path: String
    private let fd: Int32
    private let digest = StreamingDigest(.sha256)
    private var failure: Int32 = 0
    /// Bytes written.
    private(set) var size: Int64 = 0
    private var done = false

    init(path: String) throws(StorageError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Disk.failure("create \(path)", errno) }
    }

    deinit { discard() }

    /// Runs `download` with a sink that appends what it is given.
    func fill(_ download: (_ sink: (UnsafeRawBufferPointer) -> Bool) throws -> Void) throws {
        try download { [self] bytes in
            var written = 0
            while written < bytes.count {
                let count = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { failure = errno; return false }
                written += count
            }
            digest.update(bytes)
            size += Int64(bytes.count)
            return true
        }
        if failure != 0 { throw Disk.failure("write \(path)", failure) }
    }

    /// The SHA-256 (hex) of what was fetched; asked once the fetch is over.
    private(set) lazy var fetchedSHA256 = ByteEncoding.hex(digest.finish())

    /// Makes what was fetched durable (before `keep`, where the copy is the only one).
    func sync() throws(StorageError) {
        guard fsync(fd) == 0 else { throw Disk.failure("fsync \(path)", errno) }
    }

    /// Names the copy by its digest, which must be `sha256`.
    func keep(as target: String, sha256: String) throws(StorageError) {
        let got = fetchedSHA256
        guard got == sha256 else {
            throw StorageError(.failed, "the object store's bytes have sha-256 \(got), not the \(sha256) their row records")
        }
        guard rename(path, target) == 0 else { throw Disk.failure("rename \(path)", errno) }
        done = true
        close(fd)
    }

    /// A descriptor to read what was fetched, the file itself gone (a part of a blob, sent once).
    func readable() throws(StorageError) -> Int32 {
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw Disk.failure("open \(path)", errno) }
        discard()
        return reader
    }

    func discard() {
        guard !done else { return }
        done = true
        unlink(path)
        close(fd)
    }
}
