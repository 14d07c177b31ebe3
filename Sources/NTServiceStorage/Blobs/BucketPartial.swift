#if canImport(Glibc)
import Glibc
import NTSQLKit
#endif
import NTServiceModel
import Foundation
import NTHashing
import NTObjectStorage

/// A resumable upload's bytes in a bucket: segments `<tenant>/uploads/<id>/<start>`, each named
/// by the offset it starts at. Every segment but the last holds `partSize` bytes (at least the
/// store's 5 MiB, so each can become one part of the finished object); the last, the tail, is
/// rewritten whole each time the upload is made durable. Segments are plain objects, so any
/// daemon finds them, and a store that forgets multipart uploads in progress across a restart
/// (rclone) loses nothing acknowledged.
///
/// What a daemon opens is walked from offset 0 up to the recorded offset: bytes past it (a tail
/// rewritten longer before a crash, a segment of a PATCH that was refused) were never
/// acknowledged and are ignored, and overwritten as the upload goes on. The walk hashes the
/// bytes as it reads them: like a partial file, the one time they are read again.
///
/// Between durable points, the tail's bytes are in a local buffer file of this daemon's.
/// A segment that fills during a PATCH is sent at once (the body waits meanwhile); it counts
/// only once the PATCH is made durable.
final class BucketPartial: PartialBlob, @unchecked Sendable {
    let name: String
    let openedOffset: Int64
    let openedDigest: StreamingDigest
    private let transfer: BucketTransfer
    /// The store's errors as the API's (`BucketBlobStore.serviceError`).
    private let failure: @Sendable (ObjectStoreError) -> StorageError
    private let partSize: Int64
    private let bufferPath: String
    private var descriptor: Int32?
    /// Where the tail starts: the buffer holds the bytes from here on.
    private var tailStart: Int64
    private var bufferLength: Int64
    /// The starts of the full segments before the tail, for a rollback across them.
    private var fullSegments: [Int64]

    static func segmentName(_ name: String, start: Int64) -> String {
        let digits = String(start)
        return "\(name)/" + String(repeating: "0", count: max(0, 15 - digits.count)) + digits
    }

    /// The segments that make the first `length` bytes, in order from offset 0 (fewer when one
    /// is missing: then they hold less).
    static func chain(_ objects: [ObjectSummary], below name: String, length: Int64) -> [ObjectSummary] {
        var byStart: [Int64: ObjectSummary] = [:]
        for object in objects where object.key.hasPrefix(name + "/") {
            if let start = Int64(object.key.dropFirst(name.count + 1)) { byStart[start] = object }
        }
        var chain: [ObjectSummary] = []
        var position: Int64 = 0
        while position < length, var segment = byStart[position], segment.size > 0 {
            segment.size = min(segment.size, length - position)
            chain.append(segment)
            position += segment.size
        }
        return chain
    }

    init(name: String, transfer: BucketTransfer, partSize: Int64, buffer: String, recordedOffset: Int64,
         failure: @escaping @Sendable (ObjectStoreError) -> StorageError) throws {
        self.name = name
        self.transfer = transfer
        self.failure = failure
        self.partSize = partSize
        bufferPath = buffer
        unlink(buffer)
        let digest = StreamingDigest(.sha256)
        var position: Int64 = 0
        var full: [Int64] = []
        var tail: [UInt8] = []
        for segment in Self.chain(try transfer.list(name + "/"), below: name, length: recordedOffset) {
            let isTail = position + segment.size == recordedOffset && segment.size < partSize
            var received: Int64 = 0
            try transfer.get(segment.key, range: 0..<segment.size) { bytes in
                digest.update(bytes)
                if isTail { tail += bytes }
                received += Int64(bytes.count)
                return true
            }
            guard received == segment.size else { throw ObjectStoreError.unavailable("\(segment.key) ended after \(received) of \(segment.size) bytes") }
            if !isTail { full.append(position) }
            position += segment.size
        }
        openedOffset = position
        openedDigest = digest
        fullSegments = full
        tailStart = position - Int64(tail.count)
        bufferLength = 0
        if !tail.isEmpty { try writeBuffer(tail[...], at: 0) }
    }

    deinit {
        park()
        unlink(bufferPath)
    }

    private func fd() throws(StorageError) -> Int32 {
        if let descriptor { return descriptor }
        let fd = open(bufferPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Disk.failure("open \(bufferPath)", errno) }
        descriptor = fd
        return fd
    }

    private func writeBuffer(_ bytes: ArraySlice<UInt8>, at offset: Int64) throws(StorageError) {
        let fd = try fd()
        let failure = bytes.withUnsafeBytes { raw -> Int32 in
            var written = 0
            while written < raw.count {
                let count = pwrite(fd, raw.baseAddress! + written, raw.count - written, off_t(offset) + off_t(written))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return errno }
                written += count
            }
            return 0
        }
        guard failure == 0 else { throw Disk.failure("write \(bufferPath)", failure) }
        bufferLength = max(bufferLength, offset + Int64(bytes.count))
    }

    func write(_ batch: [some ByteBuffer], at offset: Int64, last: Bool) throws(StorageError) {
        bufferLength = try FileWrites.write(try fd(), batch, at: offset - tailStart)
        while bufferLength >= partSize {
            try sendSegment(length: partSize)
            fullSegments.append(tailStart)
            // What came past the full segment starts the next one.
            let rest = try readBuffer(from: partSize, count: bufferLength - partSize)
            tailStart += partSize
            bufferLength = 0
            guard ftruncate(try fd(), 0) == 0 else { throw Disk.failure("ftruncate \(bufferPath)", errno) }
            if !rest.isEmpty { try writeBuffer(rest[...], at: 0) }
        }
    }

    func truncate(to offset: Int64) throws(StorageError) {
        if offset < tailStart {
            // Back across segments this PATCH filled: the one holding `offset` is the tail again.
            let start = fullSegments.last { $0 <= offset } ?? 0
            fullSegments.removeAll { $0 >= start }
            let bytes: [UInt8]
            do {
                bytes = offset > start ? try transfer.get(Self.segmentName(name, start: start), range: 0..<(offset - start)) : []
            } catch {
                throw failure(error)
            }
            tailStart = start
            bufferLength = 0
            guard ftruncate(try fd(), 0) == 0 else { throw Disk.failure("ftruncate \(bufferPath)", errno) }
            try writeBuffer(bytes[...], at: 0)
            return
        }
        guard ftruncate(try fd(), off_t(offset - tailStart)) == 0 else { throw Disk.failure("ftruncate \(bufferPath)", errno) }
        bufferLength = offset - tailStart
    }

    func makeDurable(upTo offset: Int64, digest: StreamingDigest) throws(StorageError) {
        // A write that failed half-way and a rollback the store refused can leave the buffer
        // elsewhere: refused here, made right by the next claim's rollback.
        guard offset == tailStart + bufferLength else {
            throw StorageError(.unavailable, "the upload's bytes are being put back after a failed write; try again shortly", retryAfterSeconds: 1)
        }
        if bufferLength > 0 { try sendSegment(length: bufferLength) }
    }

    func park() {
        if let descriptor { close(descriptor) }
        descriptor = nil
    }

    /// Sends the buffer's first `length` bytes as the segment at `tailStart`.
    private func sendSegment(length: Int64) throws(StorageError) {
        let fd = try fd()
        let digest = try FileDigest.sha256(fd, offset: 0, length: length)
        do {
            try transfer.put(Self.segmentName(name, start: tailStart), .file(fd: fd, offset: 0, length: length, sha256: digest),
                             contentType: "application/octet-stream")
        } catch {
            throw failure(error)
        }
    }

    private func readBuffer(from offset: Int64, count: Int64) throws(StorageError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(count))
        let fd = try fd()
        var done = 0
        while done < bytes.count {
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(offset) + off_t(done)) }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { throw Disk.failure("read \(bufferPath)", errno) }
            done += read
        }
        return bytes
    }
}
