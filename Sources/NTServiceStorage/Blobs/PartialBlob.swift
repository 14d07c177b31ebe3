#if canImport(Glibc)
import Glibc
import NTSQLKit
#endif
import NTServiceModel
import CNTLinux
import NTHashing

/// The bytes of one resumable upload as its session writes them: appended, cut back to the
/// durable offset, made durable. Used by one job at a time, on the session's lane of the file
/// pool (its calls may block: a disk, or a bucket).
package protocol PartialBlob: AnyObject, Sendable {
    /// The bytes there were when opened: what the blob itself records as durable
    /// (`BlobStore.partialsKeepTheirOffset`), or what it holds of the recorded offset.
    var openedOffset: Int64 { get }
    /// The SHA-256 running over those bytes.
    var openedDigest: StreamingDigest { get }
    /// Appends a batch at `offset`, the end of what is written; `last`: the body's last batch
    /// (its flush follows).
    func write(_ batch: [some ByteBuffer], at offset: Int64, last: Bool) throws(StorageError)
    /// Forgets the bytes past `offset` (never past the durable ones): the next write goes there.
    func truncate(to offset: Int64) throws(StorageError)
    /// Makes the first `offset` bytes durable, `digest` running over them: a daemon opening the
    /// upload at that offset (recorded, or the blob's own) finds them.
    func makeDurable(upTo offset: Int64, digest: StreamingDigest) throws(StorageError)
    /// Lets go of what it holds between requests (a descriptor).
    func park()
}

/// A resumable upload's partial file in the blob folder. Its descriptor is open only while a
/// PATCH writes (opened by the first write, closed when the PATCH ends): thousands of
/// unfinished uploads must not hold thousands of descriptors.
///
/// The file records its own durable offset, so that a PATCH pays one flush for its bytes and
/// their offset (`BlobStore.partialsKeepTheirOffset`): past the most bytes the upload may hold
/// (its `capacity`, a hole until written) are two `DurableMark` slots, and each time bytes are
/// made durable the next mark (the offset, the SHA-256 of the bytes before it, a sequence
/// number) is written to the slot the last one is not in, then the file is flushed once. Opening finds the newest
/// mark whose digest the bytes match: a flush a crash cut short may have left the newer mark
/// without its bytes, never the older one. Bytes past the mark were not acknowledged and are
/// written over. A file without marks (made before marks existed) is opened at the recorded
/// offset, as far as it holds it, and given its first mark. Finishing cuts the marks off
/// (`DirectoryBlobStore.finish`): the row's offset, durable by then, says the rest.
final class PartialFile: PartialBlob, @unchecked Sendable {
    let path: String
    private var descriptor: Int32?
    let openedOffset: Int64
    let openedDigest: StreamingDigest
    /// Where the marks' slots begin: the most bytes the file holds.
    private let capacity: Int64
    private var writeback: Writeback
    /// The newest durable mark's sequence number.
    private var sequence: UInt64

    /// Opens the file at `fd` (taken) and hashes its durable bytes: from its newest mark the
    /// bytes match, or, in a file without marks, up to `recorded` as far as it holds them.
    /// `capacity`: the most bytes the upload may hold, where a new file's marks go.
    init(path: String, fd: Int32, recordedOffset recorded: Int64, capacity: Int64) throws(StorageError) {
        self.path = path
        defer { Glibc.close(fd) } // reopened by the first write
        let size = lseek(fd, 0, SEEK_END)
        guard size >= 0 else { throw Disk.failure("lseek", errno) }
        let marked = try DurableMark.newestMatching(fd, fileSize: Int64(size), capacity: capacity)
        if let marked {
            (openedOffset, openedDigest, sequence) = (marked.mark.offset, marked.digest, marked.mark.sequence)
            self.capacity = Int64(size) - DurableMark.slotsLength
        } else {
            let held = min(recorded, Int64(size))
            let digest = StreamingDigest(.sha256)
            try FileDigest.update(digest, fd, offset: 0, length: held)
            (openedOffset, openedDigest, sequence) = (held, digest, 0)
            self.capacity = max(capacity, held)
        }
        writeback = Writeback(from: openedOffset)
        if marked == nil {
            guard ftruncate(fd, off_t(self.capacity + DurableMark.slotsLength)) == 0 else { throw Disk.failure("ftruncate", errno) }
            // Flushed at once when it vouches for bytes (a file from before marks); a new
            // file's first mark waits for its first bytes' flush (until then, a file made with
            // marks and holding none that its bytes prove holds nothing: `newestMatching`).
            try mark(fd, upTo: openedOffset, digest: openedDigest, flushing: openedOffset > 0)
        }
    }

    deinit { park() }

    /// The descriptor, opened when needed.
    private func fd() throws(StorageError) -> Int32 {
        if let descriptor { return descriptor }
        let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw Disk.failure("open \(path)", errno) }
        descriptor = fd
        return fd
    }

    func write(_ batch: [some ByteBuffer], at offset: Int64, last: Bool) throws(StorageError) {
        let end = offset + batch.reduce(0) { $0 + Int64($1.count) }
        // Only an upload whose length grew past what its file was made for (a larger maximum
        // configured since) gets here: its bytes would overwrite the marks.
        guard end <= capacity else { throw StorageError(.full, "the upload's file holds at most \(capacity) bytes") }
        let fd = try fd()
        try FileWrites.write(fd, batch, at: offset)
        writeback.written(fd, upTo: end, last: last)
    }

    /// Nothing to cut: the newest mark says where the durable bytes end.
    func truncate(to offset: Int64) throws(StorageError) {
        writeback.rewind(to: offset)
    }

    func makeDurable(upTo offset: Int64, digest: StreamingDigest) throws(StorageError) {
        try mark(try fd(), upTo: offset, digest: digest)
        writeback = Writeback(from: offset)
    }

    /// The next mark, written to the slot the newest one is not in, and the bytes and the mark
    /// made durable by one flush (the bytes and the file's size: all an append needs; its name
    /// is durable since the upload began).
    private func mark(_ fd: Int32, upTo offset: Int64, digest: StreamingDigest, flushing: Bool = true) throws(StorageError) {
        let next = DurableMark(sequence: sequence + 1, offset: offset, digest: digest.copy().finish())
        try next.write(fd, capacity: capacity)
        guard !flushing || fdatasync(fd) == 0 else { throw Disk.failure("fdatasync", errno) }
        sequence = next.sequence
    }

    func park() {
        if let descriptor { Glibc.close(descriptor) }
        descriptor = nil
    }
}

/// A partial file's record of its durable offset (see `PartialFile`): 64 bytes at the start of
/// one of two 4 KiB slots past the file's capacity, the slot chosen by the sequence number's
/// parity. The SHA-256 of the bytes before `offset` proves they are all there; a check over
/// the mark itself catches a torn write.
struct DurableMark {
    static let slotLength: Int64 = 4096
    static let slotsLength = 2 * slotLength
    static let length = 64
    private static let magic = Array("NTMARK01".utf8)

    let sequence: UInt64
    let offset: Int64
    let digest: [UInt8]

    var bytes: [UInt8] {
        var bytes = Self.magic
        withUnsafeBytes(of: sequence.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: offset.littleEndian) { bytes += $0 }
        bytes += digest
        bytes += StreamingDigest.hash(.sha256, bytes).prefix(8)
        return bytes
    }

    /// The mark in `bytes`, when they hold a whole one.
    init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count >= Self.length, bytes.prefix(8).elementsEqual(Self.magic) else { return nil }
        let body = Array(bytes.prefix(56))
        guard StreamingDigest.hash(.sha256, body).prefix(8).elementsEqual(bytes.dropFirst(56).prefix(8)) else { return nil }
        func integer(_ at: Int) -> UInt64 { body[at..<at + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        self.init(sequence: integer(8), offset: Int64(bitPattern: integer(16)), digest: Array(body[24..<56]))
    }

    init(sequence: UInt64, offset: Int64, digest: [UInt8]) {
        self.sequence = sequence
        self.offset = offset
        self.digest = digest
    }

    func write(_ fd: Int32, capacity: Int64) throws(StorageError) {
        let bytes = self.bytes
        let at = capacity + Int64(sequence % 2) * Self.slotLength
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(at)) }
        guard written == bytes.count else { throw Disk.failure("write", written < 0 ? errno : EIO) }
    }

    /// The newest mark of a file of `fileSize` bytes whose bytes before its offset match its
    /// digest, with that digest running. A file made with marks is larger than the most bytes
    /// its upload may hold (`capacity`): one whose marks all fail to match (or never reached
    /// the disk) holds nothing it can vouch for, offset 0. Nil for a file made before marks.
    static func newestMatching(_ fd: Int32, fileSize: Int64, capacity upload: Int64) throws(StorageError) -> (mark: DurableMark, digest: StreamingDigest)? {
        let capacity = fileSize - slotsLength
        guard fileSize > upload, capacity >= 0 else { return nil }
        var slots = [UInt8](repeating: 0, count: Int(slotsLength))
        let read = slots.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(capacity)) }
        guard read == slots.count else { throw read < 0 ? Disk.failure("read", errno) : StorageError(.corrupt, "a partial file ended in its marks") }
        let marks = [0, Int(slotLength)].compactMap { DurableMark(slots[$0..<$0 + length]) }
            .filter { $0.offset >= 0 && $0.offset <= capacity }
        // Hashed once, in order: each mark's digest checked where its offset is reached.
        let digest = StreamingDigest(.sha256)
        var position: Int64 = 0
        var matching = (mark: DurableMark(sequence: 0, offset: 0, digest: digest.copy().finish()), digest: digest.copy())
        for mark in marks.sorted(by: { $0.offset < $1.offset }) {
            try FileDigest.update(digest, fd, offset: position, length: mark.offset - position)
            position = mark.offset
            if digest.copy().finish() == mark.digest, mark.sequence >= matching.mark.sequence { matching = (mark, digest.copy()) }
        }
        return matching
    }
}

/// Hashing a region of a file, read in 1 MiB pieces.
enum FileDigest {
    /// Feeds `length` bytes of `fd` from `offset` to `digest`; a file that ends first is an error.
    static func update(_ digest: StreamingDigest, _ fd: Int32, offset: Int64, length: Int64) throws(StorageError) {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var position: Int64 = 0
        while position < length {
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, Int(min(Int64($0.count), length - position)), off_t(offset + position)) }
            guard count > 0 else { throw count == 0 ? StorageError(.failed, "a file ended before its recorded size") : Disk.failure("read", errno) }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            position += Int64(count)
        }
    }

    /// The SHA-256 (hex) of a region: a part's signed digest.
    static func sha256(_ fd: Int32, offset: Int64, length: Int64) throws(StorageError) -> String {
        let digest = StreamingDigest(.sha256)
        try update(digest, fd, offset: offset, length: length)
        return ByteEncoding.hex(digest.finish())
    }
}
