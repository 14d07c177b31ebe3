import Foundation
import NTHashing
import NTObjectStorage
import NTThreadPools
import Testing
import TestSupport
import TestTraits
@testable import NTServiceModel
@testable import NTServiceStorage

/// The blob port's promises, held by every adapter alike: the folder, and a bucket on moto and
/// on rclone (the two S3 servers `make test` starts). The API suite then runs on one store per
/// database (SQLite and the folder; PostgreSQL and moto), and the scale-out drill on rclone;
/// what a store must do, whichever it is, is proven here, on each.
@Suite(.hangGuard, .testThreads) struct BlobStoreContractTests {
    enum Adapter: String, CaseIterable, CustomStringConvertible {
        case folder, moto, rclone
        var description: String { rawValue }
    }

    /// A store of the adapter's, on a folder (and a server and bucket) of the test's own.
    final class Opened: @unchecked Sendable {
        let store: any BlobStore
        private let server: S3Server?
        private let directory: String

        init(_ adapter: Adapter) throws {
            directory = testDirectory("blob-contract").path
            let io = ThreadPool(name: "contract-io", threads: 2)
            try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
            switch adapter {
            case .folder:
                server = nil
                store = try DirectoryBlobStore(blobs: directory + "/blobs", temporaryDirectory: directory + "/tmp", io: io)
            case .moto, .rclone:
                let server = try S3Server(adapter == .moto ? .moto : .rclone)
                self.server = server
                let settings = try #require(try BucketSettings.resolve(blobStore: "s3://contract/p", endpoint: "", region: "", pathStyle: false,
                                                                       environment: server.environment))
                let timeouts = TransferTimeouts(connectMs: 5000, stallSeconds: 30)
                try BucketTransfer.open(settings, timeouts: timeouts).create()
                store = try BucketBlobStore(bucket: ObjectBucket(settings: settings, transfers: ThreadPool(name: "contract-s3", threads: 2), timeouts: timeouts),
                                            dataDir: directory, io: io, partSize: Int(ObjectBucket.minimumPartSize), copyBytes: 1 << 20,
                                            retryAfterSeconds: 1, backgroundAttempts: 3, presignedSeconds: nil)
            }
        }

        deinit {
            store.stop()
            server?.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    /// A SHA-256 running over `bytes`, as an upload's session keeps one.
    static func running(_ bytes: [UInt8]) -> StreamingDigest {
        let digest = StreamingDigest(.sha256)
        digest.update(bytes)
        return digest
    }

    /// `count` bytes of the blob from the descriptor the store opened for them.
    static func read(_ opened: (fd: Int32, offset: Int64), _ count: Int) -> [UInt8] {
        defer { close(opened.fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { pread(opened.fd, $0.baseAddress, count, off_t(opened.offset)) }
        return Array(buffer.prefix(max(0, got)))
    }

    @Test(arguments: Adapter.allCases)
    func aReceivedBodyIsPlacedOnceReadBackAndRemoved(_ adapter: Adapter) async throws {
        let opened = try Opened(adapter)
        let store = opened.store
        let data = Self.bytes(300_000)
        let key = BlobKey(tenant: 1, kind: .panorama, id: UUID().uuidString.lowercased())
        let received = try await store.receive(Chunks([Array(data[..<1000]), Array(data[1000..<200_000]), Array(data[200_000...])]), toward: key)
        #expect(received.sha256 == ByteEncoding.hex(StreamingDigest.hash(.sha256, data)) && received.size == Int64(data.count))
        #expect(try await store.place(received, as: key))
        // Placed only where nothing is: a second body for the same key replaces nothing.
        let other = try await store.receive(Chunks([Self.bytes(10)]), toward: key)
        #expect(!(try await store.place(other, as: key)))
        await store.discard(other)
        let range: Range<Int64> = 1000..<251_000
        let slice = Self.read(try await store.openForReading(key, sha256: received.sha256, range: range, of: Int64(data.count)), range.count)
        #expect(slice == Array(data[1000..<251_000]))
        let local = try await store.localFile(key, sha256: received.sha256)
        #expect(FileManager.default.contents(atPath: local).map(Array.init) == data)
        await store.remove([key])
        await store.remove([key]) // one missing is no error
        // Gone from the store: the key takes a body again (a store places only where nothing is).
        let next = Self.bytes(5000).reversed().map { $0 }
        let again = try await store.receive(Chunks([next]), toward: key)
        #expect(try await store.place(again, as: key))
        #expect(Self.read(try await store.openForReading(key, sha256: again.sha256, range: 0..<5000, of: 5000), 5000) == next)
    }

    /// A resumable upload's bytes: what a reopening finds is what was made durable, as the blob
    /// records it itself (the folder: its file's marks) or else up to the recorded offset;
    /// bytes past it are written over, the rest appends, and the finished upload is the blob,
    /// its first bytes told.
    @Test(arguments: Adapter.allCases)
    func aPartialBlobKeepsItsRecordedBytesAndFinishesAsTheBlob(_ adapter: Adapter) async throws {
        let opened = try Opened(adapter)
        let store = opened.store
        let data = Self.bytes(120_000)
        let upload = BlobKey(tenant: 1, kind: .upload, id: UUID().uuidString.lowercased())
        let first = try await store.openPartial(upload, recordedOffset: 0, capacity: Int64(data.count))
        #expect(first.openedOffset == 0)
        try await store.io.run {
            try first.write([Array(data[..<40_000]), Array(data[40_000..<60_000])], at: 0, last: true)
            try first.makeDurable(upTo: 60_000, digest: Self.running(Array(data[..<60_000])))
            try first.write([Array(data[60_000..<70_000])], at: 60_000, last: true) // never made durable
            first.park()
        }
        // The database recorded less than was made durable (its record was lost in a crash).
        let again = try await store.openPartial(upload, recordedOffset: 50_000, capacity: Int64(data.count))
        let held = store.partialsKeepTheirOffset ? 60_000 : 50_000
        #expect(again.openedOffset == Int64(held))
        #expect(again.openedDigest.copy().finish() == StreamingDigest.hash(.sha256, Array(data[..<held])))
        try await store.io.run {
            try again.write([Array(data[held...])], at: Int64(held), last: true)
            try again.makeDurable(upTo: Int64(data.count), digest: Self.running(data))
            again.park()
        }
        let key = BlobKey(tenant: 1, kind: .panorama, id: UUID().uuidString.lowercased())
        #expect(try await store.finish(partial: upload, length: Int64(data.count), as: key))
        #expect(try await store.head(partial: upload).elementsEqual(data.prefix(IncomingBlob.headLength)))
        let digest = ByteEncoding.hex(StreamingDigest.hash(.sha256, data))
        #expect(Self.read(try await store.openForReading(key, sha256: digest, range: 0..<Int64(data.count), of: Int64(data.count)), data.count) == data)
        #expect(!(try await store.finish(partial: upload, length: Int64(data.count), as: key)), "the name is taken")
    }
}

/// Bytes handed over in the batches given, as a request's body hands them.
private struct Chunks: ByteStream {
    let batches: [[UInt8]]
    init(_ batches: [[UInt8]]) { self.batches = batches }

    func drain<T: Sendable>(on executor: any BlockingExecutor, _ consume: @escaping @Sendable ([[UInt8]], _ last: Bool) throws -> Void,
                            then finish: @escaping @Sendable () throws -> T) async throws -> T {
        for (index, batch) in batches.enumerated() {
            try await executor.run { try consume([batch], index == batches.count - 1) }
        }
        return try await executor.run(finish)
    }
}

extension Array: ByteBuffer where Element == UInt8 {}
