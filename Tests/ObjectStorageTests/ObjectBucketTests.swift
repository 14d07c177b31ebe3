#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import NTHashing
import NTThreadPools
import TestSupport
@testable import NTObjectStorage

/// The bucket client against both S3 implementations the tests start (moto and rclone), each
/// with its quirks as they are.
@Suite struct ObjectBucketTests {
    static let transfers = ThreadPool(name: "test-transfers", threads: 4)

    /// A fresh bucket (and a prefix, so keys are relative) on a fresh server.
    static func bucket(on server: S3Server, prefix: String = "tenants/") async throws -> ObjectBucket {
        let name = "t-" + ByteEncoding.hex(Array(UUID().uuidString.utf8.prefix(8))).lowercased()
        let settings = try #require(try BucketSettings.resolve(blobStore: "s3://\(name)/\(prefix)", endpoint: "", region: "", pathStyle: false,
                                                               environment: server.environment))
        let bucket = ObjectBucket(settings: settings, transfers: transfers, timeouts: TransferTimeouts(connectMs: 2000, stallSeconds: 10))
        try await bucket.run { try $0.create() }
        return bucket
    }

    static func pattern(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ ($0 >> 13)) }
    }

    @Test(arguments: S3Server.Kind.allCases)
    func objectsArePutReadRangedListedAndDeleted(_ kind: S3Server.Kind) async throws {
        let server = try S3Server(kind)
        let bucket = try await Self.bucket(on: server)
        try await bucket.run { try $0.create() } // ours already: no error (rclone says BucketAlreadyExists)
        #expect(try await bucket.run { try $0.multipartUploads("") }.isEmpty) // rclone: NoSuchUpload before the first
        let bytes = Self.pattern(300_000)
        try await bucket.run { try $0.put("1/panoramas/a", .bytes(bytes), contentType: "image/jpeg") }
        #expect(try await bucket.run { try $0.get("1/panoramas/a") } == bytes)
        // A ranged GET: rclone answers 200 with the slice, moto 206; both are the slice here.
        #expect(try await bucket.run { try $0.get("1/panoramas/a", range: 1000..<5000) } == Array(bytes[1000..<5000]))
        let streamed = Collected()
        try await bucket.run { try $0.get("1/panoramas/a", range: 299_990..<300_000) { streamed.add($0); return true } }
        #expect(streamed.bytes == Array(bytes[299_990...]))
        let head = try #require(try await bucket.run { try $0.head("1/panoramas/a") })
        #expect(head.size == 300_000 && head.lastModified > 1_700_000_000)
        #expect(try await bucket.run { try $0.head("1/panoramas/none") } == nil)
        await #expect(throws: ObjectStoreError.self) { _ = try await bucket.run { try $0.get("1/panoramas/none") } }

        try await bucket.run { try $0.put("1/worldmaps/w", .bytes([]), contentType: "application/octet-stream") }
        try await bucket.run { try $0.put("2/panoramas/b", .bytes([1, 2, 3]), contentType: "image/jpeg") }
        #expect(try await bucket.run { try $0.list("1/") }.map(\.key) == ["1/panoramas/a", "1/worldmaps/w"])
        #expect(try await bucket.run { try $0.list("") }.map(\.key).count == 3)
        #expect(try await bucket.run { try $0.list("", limit: 2) }.count == 2)
        try await bucket.run { try $0.delete("1/panoramas/a") }
        try await bucket.run { try $0.delete("1/panoramas/a") } // gone already: no error
        #expect(try await bucket.run { try $0.list("1/") }.map(\.key) == ["1/worldmaps/w"])
        server.stop()
    }

    @Test(arguments: S3Server.Kind.allCases)
    func aFileRegionIsSentWithItsDigestSigned(_ kind: S3Server.Kind) async throws {
        let server = try S3Server(kind)
        let bucket = try await Self.bucket(on: server)
        let bytes = Self.pattern(1_000_000, seed: 3)
        let folder = testDirectory("region")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("f").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        let slice = Array(bytes[100..<700_100])
        try await bucket.run { try $0.put("k", .file(fd: fd, offset: 100, length: 700_000, sha256: ByteEncoding.hex(StreamingDigest.hash(.sha256, slice))),
                             contentType: "application/octet-stream") }
        #expect(try await bucket.run { try $0.get("k") } == slice)
        // A digest that is not the body's: a store that checks it refuses (moto and rclone
        // do not check, so this asserts only that nothing else breaks); the signature covers
        // whatever we say.
        server.stop()
    }

    @Test(arguments: S3Server.Kind.allCases)
    func aMultipartUploadIsFilledAndCompleted(_ kind: S3Server.Kind) async throws {
        let server = try S3Server(kind)
        let bucket = try await Self.bucket(on: server)
        let first = Self.pattern(Int(ObjectBucket.minimumPartSize), seed: 1), last = Self.pattern(12345, seed: 2)
        let id = try await bucket.run { try $0.startMultipart("1/panoramas/m", contentType: "image/jpeg") }
        let etag1 = try await bucket.run { try $0.putPart("1/panoramas/m", uploadId: id, number: 1, .bytes(first)) }
        let etag2 = try await bucket.run { try $0.putPart("1/panoramas/m", uploadId: id, number: 2, .bytes(last)) }
        let parts = [UploadedPart(number: 1, etag: etag1, size: Int64(first.count)), UploadedPart(number: 2, etag: etag2, size: Int64(last.count))]
        let uploads = try await bucket.run { try $0.multipartUploads("1/") }
        #expect(uploads.map(\.key) == ["1/panoramas/m"] && uploads.map(\.uploadId) == [id])
        #expect(try await bucket.run { try $0.head("1/panoramas/m") } == nil) // not an object before completion
        try await bucket.run { try $0.completeMultipart("1/panoramas/m", uploadId: id, parts: parts) }
        #expect(try await bucket.run { try $0.get("1/panoramas/m") } == first + last)
        #expect(try await bucket.run { try $0.multipartUploads("1/") }.isEmpty)
        server.stop()
    }

    @Test(arguments: S3Server.Kind.allCases)
    func anAbortedUploadLeavesNothing(_ kind: S3Server.Kind) async throws {
        let server = try S3Server(kind)
        let bucket = try await Self.bucket(on: server)
        let id = try await bucket.run { try $0.startMultipart("u/x", contentType: "application/octet-stream") }
        _ = try await bucket.run { try $0.putPart("u/x", uploadId: id, number: 1, .bytes(Self.pattern(1000))) }
        try await bucket.run { try $0.abortMultipart("u/x", uploadId: id) }
        #expect(try await bucket.run { try $0.multipartUploads("") }.isEmpty)
        #expect(try await bucket.run { try $0.head("u/x") } == nil)
        try await bucket.run { try $0.abortMultipart("u/x", uploadId: id) } // gone already: no error
        server.stop()
    }

    @Test func moto_refusesASmallPartButTheLast() async throws {
        let server = try S3Server(.moto)
        let bucket = try await Self.bucket(on: server)
        let id = try await bucket.run { try $0.startMultipart("small", contentType: "application/octet-stream") }
        let parts = [try await bucket.run { try $0.putPart("small", uploadId: id, number: 1, .bytes(Self.pattern(1000))) },
                     try await bucket.run { try $0.putPart("small", uploadId: id, number: 2, .bytes(Self.pattern(1000))) }]
        let listed = parts.enumerated().map { UploadedPart(number: $0.offset + 1, etag: $0.element, size: 1000) }
        await #expect { try await bucket.run { try $0.completeMultipart("small", uploadId: id, parts: listed) } } throws: {
            if case .refused(_, "EntityTooSmall", _) = $0 as? ObjectStoreError { return true }
            return false
        }
        server.stop()
    }

    @Test(arguments: S3Server.Kind.allCases)
    func aStoreThatIsAwayIsUnavailableAndComesBack(_ kind: S3Server.Kind) async throws {
        let server = try S3Server(kind)
        let bucket = try await Self.bucket(on: server)
        server.stop()
        await #expect { try await bucket.run { try $0.put("k", .bytes([1]), contentType: "application/octet-stream") } } throws: {
            if case .unavailable = $0 as? ObjectStoreError { return true }
            return false
        }
        try server.start()
        if kind == .moto { try await bucket.run { try $0.create() } } // moto keeps nothing across a restart
        try await bucket.run { try $0.put("k", .bytes([1]), contentType: "application/octet-stream") }
        #expect(try await bucket.run { try $0.get("k") } == [1])
        server.stop()
    }

    @Test func wrongCredentialsAreRefusedNotUnavailable() async throws {
        let server = try S3Server(.rclone)
        let bucket = try await Self.bucket(on: server)
        var settings = bucket.settings
        settings.credentials.secretKey = "wrong"
        let impostor = ObjectBucket(settings: settings, transfers: Self.transfers, timeouts: TransferTimeouts(connectMs: 2000, stallSeconds: 10))
        await #expect { try await impostor.run { try $0.put("k", .bytes([1]), contentType: "application/octet-stream") } } throws: {
            if case .refused(403, _, _) = $0 as? ObjectStoreError { return true }
            return false
        }
        server.stop()
    }
}

/// Bytes a sink collects on the transfer thread.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [UInt8] = []
    func add(_ bytes: UnsafeRawBufferPointer) { lock.withLock { collected += bytes } }
    var bytes: [UInt8] { lock.withLock { collected } }
}
