import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
import NTThreadPools
import NTCoordination
@testable import NTHTTPCore
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTUploads

/// The sessions of resumable uploads, without sockets or a database. A daemon another one asks
/// to give an upload up lets go only once the offsets of its durable steps are recorded: the
/// next daemon reads the row they leave, and a HEAD there reports them (the scale-out on a
/// bucket once saw the older offset, and then a 409 for the PATCH sent from it).
@Suite(.hangGuard, .testThreads) struct UploadSessionsTests {
    /// Holds each recording until opened.
    private final class HeldRecords: Sendable {
        private let isOpen = Atomic<Bool>(false)
        private let opened = Waiters()
        let entered = Waiters()
        let log = Mutex<[String]>([])

        func record(_ offset: Int64) async {
            entered.signal()
            await opened.awaitSignal(upTo: 60_000) { isOpen.load(ordering: .sequentiallyConsistent) }
            log.withLock { $0.append("recorded \(offset)") }
        }

        func open() {
            isOpen.store(true, ordering: .sequentiallyConsistent)
            opened.signal()
        }
    }

    /// A finished body of `count` bytes, as the connection hands it over.
    private func body(_ count: Int) -> RequestBody {
        let stream = BodyStream(budget: BodyBudget(limit: 1 << 20), buffers: BodyBufferPool(bufferSize: 64, budget: 1 << 20)) {}
        _ = [UInt8](repeating: 7, count: count).withUnsafeBytes { stream.append($0, highWatermark: 1 << 20) }
        stream.finish()
        return RequestBody(stream: stream)
    }

    @Test func givingAnUploadUpWaitsUntilItsDurableStepsAreRecordedInOrder() async throws {
        let folder = testDirectory("upload-sessions").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let io = ThreadPool(name: "test-io", threads: 2)
        let blobs = try DirectoryBlobStore(blobs: folder + "/blobs", temporaryDirectory: folder + "/tmp/incoming", io: io)
        let held = HeldRecords()
        let sessions = UploadSessions(blobs: blobs, locker: LocalLocker(), durableStep: 4) { _, offset in
            await held.record(offset)
            return nil
        }
        let key = BlobKey(tenant: 1, kind: .upload, id: "u1")
        let entered = held.entered.mark()

        // Two PATCHes of 6 bytes, each a durable step: the second's record waits for the first's.
        let session = try await sessions.session(key, recordedOffset: 0)
        for _ in 0..<2 {
            try await session.withClaim(checksum: nil) { claim in
                try await session.receive(body(6), claim.token, room: 100, length: 100)
                #expect(try await session.commit(claim.token, expected: nil) > 0)
            }
        }
        await held.entered.awaitSignal(since: entered, upTo: 10_000)

        let ended = Waiters()
        let giving = Task {
            await sessions.endAndWait(key)
            held.log.withLock { $0.append("let go") }
            ended.signal()
        }
        // Held, the records keep the upload: it must not be let go within this window.
        await ended.awaitSignal(upTo: 300) { held.log.withLock { !$0.isEmpty } }
        #expect(held.log.withLock { $0 } == [])

        held.open()
        await giving.value
        #expect(held.log.withLock { $0 } == ["recorded 6", "recorded 12", "let go"])
    }

    /// A claim is held by scope: one refused before it wrote (an offset that does not match) is
    /// given up when its body throws, and the next request claims the upload at once, from
    /// the same offset; one spent by its body's commit is not the writer after it.
    @Test func aClaimIsGivenUpWhenItsScopeEnds() async throws {
        let folder = testDirectory("upload-claims").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let io = ThreadPool(name: "test-io", threads: 2)
        let blobs = try DirectoryBlobStore(blobs: folder + "/blobs", temporaryDirectory: folder + "/tmp/incoming", io: io)
        let sessions = UploadSessions(blobs: blobs, locker: LocalLocker(), durableStep: 0) { _, _ in nil }
        let session = try await sessions.session(BlobKey(tenant: 1, kind: .upload, id: "u2"), recordedOffset: 0)

        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await session.withClaim(checksum: nil) { claim in
                #expect(session.isWritten && claim.offset == 0)
                throw Refused()
            }
        }
        #expect(!session.isWritten)
        let reached = try await session.withClaim(checksum: nil) { claim in
            try await session.receive(body(5), claim.token, room: 100, length: 100)
            return try await session.commit(claim.token, expected: nil)
        }
        #expect(reached == 5 && !session.isWritten)
        #expect(try await session.withClaim(checksum: nil) { $0.offset } == 5)
        await sessions.endAndWait(BlobKey(tenant: 1, kind: .upload, id: "u2"))
    }
}
