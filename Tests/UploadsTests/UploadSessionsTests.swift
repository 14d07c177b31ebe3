import Dispatch
import NTHashing
import NTSQLKit
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
        let session = try await sessions.session(key, recordedOffset: 0, capacity: 100)
        for _ in 0..<2 {
            try await session.withClaim(checksum: nil) { claim in
                let reached = try await session.receive(body(6), claim.token, room: 100, length: 100, expected: nil)
                #expect(reached > 0)
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
        let session = try await sessions.session(BlobKey(tenant: 1, kind: .upload, id: "u2"), recordedOffset: 0, capacity: 100)

        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await session.withClaim(checksum: nil) { claim in
                #expect(session.isWritten && claim.offset == 0)
                throw Refused()
            }
        }
        #expect(!session.isWritten)
        let reached = try await session.withClaim(checksum: nil) { claim in
            try await session.receive(body(5), claim.token, room: 100, length: 100, expected: nil)
        }
        #expect(reached == 5 && !session.isWritten)
        #expect(try await session.withClaim(checksum: nil) { $0.offset } == 5)
        await sessions.endAndWait(BlobKey(tenant: 1, kind: .upload, id: "u2"))
    }

    /// Partial bytes in memory whose flush waits (at most 10 s) until a recording has begun,
    /// and fails when told to.
    private final class FlushAfterRecording: PartialBlob, @unchecked Sendable {
        let openedOffset: Int64 = 0
        let openedDigest = StreamingDigest(.sha256)
        let recordingBegan = DispatchSemaphore(value: 0)
        let failing: Bool
        private let held = Mutex<Int64>(0)
        init(failing: Bool) { self.failing = failing }
        func write(_ batch: [some ByteBuffer], at offset: Int64, last: Bool) throws(StorageError) {
            held.withLock { $0 = offset + batch.reduce(0) { $0 + Int64($1.count) } }
        }
        func truncate(to offset: Int64) throws(StorageError) { held.withLock { $0 = offset } }
        func makeDurable(upTo offset: Int64, digest: StreamingDigest) throws(StorageError) {
            guard recordingBegan.wait(timeout: .now() + 10) == .success else { throw StorageError(.failed, "the flush waited for a record that never began") }
            if failing { throw StorageError(.failed, "the disk failed") }
        }
        func park() {}
    }

    /// A PATCH pays one flush and one commit side by side: its offset's record begins while
    /// its bytes are being flushed (here the flush waits for it; in turn, they would deadlock
    /// into the 10 s failure), and the PATCH answers only once both are done. A flush that fails
    /// records the durable offset again, so the row never keeps an offset the file lost.
    @Test func aPatchRecordsItsOffsetWhileItsBytesAreFlushed() async throws {
        for failing in [false, true] {
            let blob = FlushAfterRecording(failing: failing)
            let session = UploadSession(key: BlobKey(tenant: 1, kind: .upload, id: "u3"), blob: blob, lane: SerialLane(pool: ThreadPool(name: "test-io", threads: 1)),
                                        durableStep: 0) { _, _ in }
            let recorded = Mutex<[Int64]>([])
            let patch = { () async throws -> Int64 in
                try await session.withClaim(checksum: nil) { claim in
                    try await session.receive(body(7), claim.token, room: 100, length: 100, expected: nil, recordingAlongside: { offset in
                        recorded.withLock { $0.append(offset) }
                        blob.recordingBegan.signal()
                    })
                }
            }
            if failing {
                await #expect(throws: StorageError.self) { try await patch() }
                #expect(recorded.withLock { $0 } == [7, 0], "the row back at the durable offset")
                #expect(session.durableOffset == 0)
            } else {
                #expect(try await patch() == 7)
                #expect(recorded.withLock { $0 } == [7])
                #expect(session.durableOffset == 7)
            }
        }
    }

    /// While a PATCH's bytes are flushed, its offset is recorded already: one who reads the
    /// row then (a HEAD, a creation sent again) finds it ahead of the session's durable offset,
    /// and must wait for the flush, not take the upload for another daemon's and stop this
    /// PATCH (under load on a bucket, a creation sent again so made its first a 409).
    @Test func theOffsetSettledAfterAFlushUnderWayIsTheOneItLeaves() async throws {
        let blob = FlushAfterRecording(failing: false)
        let session = UploadSession(key: BlobKey(tenant: 1, kind: .upload, id: "u4"), blob: blob, lane: SerialLane(pool: ThreadPool(name: "test-io", threads: 1)),
                                    durableStep: 0) { _, _ in }
        let seen = Mutex<(durable: Int64, settled: Int64)?>(nil)
        let reached = try await session.withClaim(checksum: nil) { claim in
            try await session.receive(body(9), claim.token, room: 100, length: 100, expected: nil, recordingAlongside: { _ in
                let durable = session.durableOffset
                blob.recordingBegan.signal()
                let settled = await session.settledDurableOffset()
                seen.withLock { $0 = (durable, settled) }
            })
        }
        #expect(reached == 9)
        let (durable, settled) = try #require(seen.withLock { $0 })
        #expect(durable == 0, "the row runs ahead of the flush")
        #expect(settled == 9, "and the settled offset waits for it")
    }
}
