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
    /// The bytes there were when opened (at most the recorded offset).
    var openedOffset: Int64 { get }
    /// The SHA-256 running over those bytes.
    var openedDigest: StreamingDigest { get }
    /// Appends a batch at `offset`, the end of what is written.
    func write(_ batch: [some ByteBuffer], at offset: Int64) throws(StorageError)
    /// Drops the bytes past `offset` (never past the durable ones).
    func truncate(to offset: Int64) throws(StorageError)
    /// Makes the first `offset` bytes durable: a daemon opening the upload at that recorded
    /// offset finds them.
    func makeDurable(upTo offset: Int64) throws(StorageError)
    /// Lets go of what it holds between requests (a descriptor).
    func park()
}

/// A resumable upload's partial file in the blob folder. Its descriptor is open only while a
/// PATCH writes (opened by the first write, closed when the PATCH ends): thousands of
/// unfinished uploads must not hold thousands of descriptors.
final class PartialFile: PartialBlob, @unchecked Sendable {
    let path: String
    private var descriptor: Int32?
    let openedOffset: Int64
    let openedDigest: StreamingDigest
    /// Bytes already handed to the disk with sync_file_range.
    private var writebackStarted: Int64

    /// Opens the file at `fd` (taken), cut at `recorded`, and hashes what it holds.
    init(path: String, fd: Int32, recordedOffset recorded: Int64) throws(StorageError) {
        self.path = path
        defer { Glibc.close(fd) } // reopened by the first write
        let size = lseek(fd, 0, SEEK_END)
        guard size >= 0 else { throw Disk.failure("lseek", errno) }
        let held = min(recorded, Int64(size))
        guard ftruncate(fd, off_t(held)) == 0 else { throw Disk.failure("ftruncate", errno) }
        let digest = StreamingDigest(.sha256)
        try FileDigest.update(digest, fd, offset: 0, length: held)
        openedOffset = held
        openedDigest = digest
        writebackStarted = held
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

    func write(_ batch: [some ByteBuffer], at offset: Int64) throws(StorageError) {
        let fd = try fd()
        try FileWrites.write(fd, batch, at: offset)
        let end = offset + batch.reduce(0) { $0 + Int64($1.count) }
        // Writeback starts as the body arrives, so the fsync at its end finds little left.
        if end - writebackStarted >= FileWrites.writebackStep {
            _ = nt_start_writeback(fd, writebackStarted, end - writebackStarted)
            writebackStarted = end
        }
    }

    func truncate(to offset: Int64) throws(StorageError) {
        guard ftruncate(try fd(), off_t(offset)) == 0 else { throw Disk.failure("ftruncate", errno) }
        writebackStarted = min(writebackStarted, offset)
    }

    func makeDurable(upTo offset: Int64) throws(StorageError) {
        // The bytes and the file's size: all an append needs (its name is durable since the
        // upload began).
        guard fdatasync(try fd()) == 0 else { throw Disk.failure("fdatasync", errno) }
        writebackStarted = offset
    }

    func park() {
        if let descriptor { Glibc.close(descriptor) }
        descriptor = nil
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
