#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import NTLogging
import TestSupport
import TestTraits
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// Resuming: connections cut mid-PATCH, a newer PATCH taking over, restarts.
@Suite(.hangGuard, .testThreads) struct UploadResumeTests {
    private func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    private func head(_ client: APIClient, _ location: String) throws -> Int {
        Int(try client.tus("HEAD", location).header("Upload-Offset") ?? "") ?? -1
    }

    @Test func aPatchCutAfterNBytesKeepsAtMostNAndTheUploadResumes() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(1_000_000)
        let panoramaId = newID()
        let location = try #require(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count).header("Location"))
        let sent = 400_000
        do {
            let raw = try RawClient(port: harness.port)
            try raw.send(Array(patchHead(location, token: harness.alpha, offset: 0, length: image.count).utf8) + Array(image[0..<sent]))
        } // cut here
        // The server keeps what arrived, fsynced, once it has seen the connection end.
        try await waitUntil("the interrupted PATCH to be recorded") { try head(client, location) > 0 }
        let offset = try head(client, location)
        #expect(offset > 0 && offset <= sent)
        #expect(try client.tusPatch(location, offset: offset, Array(image[offset...])).status == 204)
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)").string("sha256") == sha256Hex(image))
        await harness.finish()
    }

    /// An offset asked while a PATCH whose client went away is still ending (its last bytes on
    /// their way through the server) is the one that PATCH leaves: not an older one, from
    /// which the client's next PATCH would be a 409 (found by the client's stop-and-resume test
    /// on a loaded machine). Durable steps are off, so only the PATCH's end makes bytes durable.
    @Test func anOffsetAskedWhileACutPatchStillEndsIsTheOneItLeaves() async throws {
        let harness = try await ServiceHarness(alone: true, configure: {
            $0.uploadDurableStepBytes = 64 << 20
            $0.bodyBatchBytes = 16 * 1024
            $0.uploadTakeoverGraceMs = 30_000
        })
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(900_000)
        let sent = 300_000
        let (writer, location, _) = try beginLongPatch(client, port: harness.port, floorId: floorId, image: image, sent: sent)
        try await waitUntil("the PATCH's bytes to reach its partial file (not yet durable)") {
            harness.storedFiles().contains { file in file.contains("/uploads/") && size(of: harness.dataDir + "/" + file) >= sent / 2 }
        }
        let asking = try RawClient(port: harness.port)
        try asking.send("HEAD \(location) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.alpha)\r\nTus-Resumable: 1.0.0\r\n\r\n")
        shutdown(writer.fd, Int32(SHUT_RDWR)) // the client goes away
        let answer = try asking.readResponse(bodyExpected: false)
        #expect(answer.status == 200)
        #expect(answer.header("Upload-Offset") == String(sent))
        #expect(try client.tusPatch(location, offset: sent, Array(image[sent...])).status == 204)
        await harness.finish()
    }

    /// Whichever daemon each PATCH reaches (balanced, through nginx): the older one stalled
    /// halfway, the newer takes over. (Small steps and batches, so that the older one's bytes
    /// become durable while it stalls; a body timeout longer than the test, so that what ends
    /// the older one is the newer, never its own stall on a slow run: CI once took 30 s here.)
    @Test func aNewerPatchWinsAndTheOlderStopsWithoutCorruptingAnything() async throws {
        let harness = try await ServiceHarness(configure: {
            $0.uploadDurableStepBytes = 64 * 1024
            $0.bodyBatchBytes = 16 * 1024
            $0.bodyTimeoutMs = 150_000
        })
        let client = try harness.client(harness.alpha)
        let (location, panoramaId, image) = try uploadBegun(client)
        // The older PATCH: its connection stalls halfway (as one that died without closing).
        let older = try RawClient(port: harness.port)
        try older.send(patchHead(location, token: harness.alpha, offset: 100_000, length: 500_000, expectContinue: true))
        #expect(try older.readResponse(bodyExpected: false).status == 100)
        try older.send(Array(image[100_000..<300_000]))
        // Its durable steps say a daemon writes it (a balancer answers 100 Continue itself): at
        // least two in its 200,000 bytes, the last reported alike twice in a row.
        try await waitUntil("the older PATCH's steps to be durable") {
            let offset = try head(client, location)
            return try offset >= 100_000 + 2 * 65_536 && head(client, location) == offset
        }
        // The newer PATCH, from the offset the server reports, does not wait for the older one.
        // Should a step of the older one land between the HEAD and the PATCH: 409, and the
        // client asks again on a new connection, as tus clients do (a few times at most).
        var newer: RawClient.Response?
        for _ in 0..<4 where newer?.status != 204 {
            let fresh = try harness.client(harness.alpha)
            let offset = try head(fresh, location)
            newer = try fresh.tusPatch(location, offset: offset, Array(image[offset...]))
        }
        #expect(newer?.status == 204)
        #expect(newer?.header("Upload-Offset") == String(image.count))
        // The older one's next bytes are refused and its connection ends.
        try? older.send(Array(image[300_000..<600_000]))
        let refused = Result { try older.readResponse() }
        #expect((try? refused.get()) == nil || (try? refused.get())?.status == 409, "\(refused)")
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)").string("sha256") == sha256Hex(image))
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)/content").body == image)
        await harness.finish()
    }

    /// A long PATCH whose connection dies without the server seeing it (a phone that lost its
    /// network) made its bytes durable as it went (`uploadDurableStepBytes`): the client's
    /// next PATCH continues from there, not from where the dead one began. (Small steps and
    /// batches, so that half a megabyte makes several.)
    @Test func aLongPatchKeepsWhatItHasForTheNextOne() async throws {
        let harness = try await ServiceHarness(configure: { $0.uploadDurableStepBytes = 64 * 1024; $0.bodyBatchBytes = 16 * 1024 })
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(900_000)
        let (dead, location, panoramaId) = try beginLongPatch(client, port: harness.port, floorId: floorId, image: image, sent: 500_000)
        // Its connection stays open and says nothing more; the server keeps what arrived, step
        // by step. A step ends with the batch that reaches 64 KiB, so it may hold up to a batch
        // more (through a balancer batches are cut anywhere): at least 6 steps of the 500,000
        // bytes, the last of them reported alike twice in a row (by two daemons, balanced).
        try await waitUntil("the long PATCH's bytes to be durable") {
            let offset = try head(client, location)
            return try offset >= 6 * 65_536 && head(client, location) == offset
        }
        let offset = try head(client, location)
        #expect(offset <= 500_000)
        let next = try client.tusPatch(location, offset: offset, Array(image[offset...]))
        #expect(next.status == 204)
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)/content").body == image)
        shutdown(dead.fd, Int32(SHUT_RDWR)) // else shutting down waits out its grace for it
        await harness.finish()
    }

    @Test func theOffsetAndItsDigestSurviveARestart() async throws {
        let first = try await ServiceHarness()
        let client = try first.client(first.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(700_000)
        let panoramaId = newID()
        let location = try #require(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, Array(image[0..<250_000])).status == 204)
        await first.stop()
        // Bytes past the durable offset (written by a PATCH never acknowledged) must not count.
        let partial = try #require(first.storedFiles().first { $0.hasPrefix("blobs/1/uploads/") })
        let handle = try #require(FileHandle(forWritingAtPath: first.dataDir + "/" + partial))
        try handle.seek(toOffset: 250_000)
        try handle.write(contentsOf: Data(repeating: 0xEE, count: 1234))
        try handle.close()

        let second = try await ServiceHarness(dataDir: first.dataDir)
        let resumed = try second.client(second.alpha)
        #expect(try head(resumed, location) == 250_000)
        #expect(try resumed.tusPatch(location, offset: 250_000, Array(image[250_000...])).status == 204)
        #expect(try resumed.send("GET", "/v1/panoramas/\(panoramaId)").string("sha256") == sha256Hex(image))
        await second.finish()
    }

    /// Where the partial file keeps its own durable offset (the folder), a PATCH's record of
    /// it is lazy: a crash may take the row back, never the file's record, which the upload
    /// resumes from (the row catches up).
    @Test func anOffsetRecordACrashTookBackIsTheFilesToSay() async throws {
        let first = try await ServiceHarness()
        let client = try first.client(first.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(600_000)
        let panoramaId = newID()
        let location = try #require(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count,
                                                         sha256: sha256Hex(image)).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, Array(image[0..<100_000])).status == 204)
        #expect(try client.tusPatch(location, offset: 100_000, Array(image[100_000..<300_000])).status == 204)
        await first.stop()

        let second = try await ServiceHarness(dataDir: first.dataDir)
        _ = try await second.service.records.write { try await $0.run("UPDATE uploads SET \"offset\" = 100000") }
        let resumed = try second.client(second.alpha)
        #expect(try head(resumed, location) == 300_000)
        #expect(try await second.service.records.readOne { try await UploadStore.upload($0, 1, String(location.split(separator: "/")[2])) }?.offset == 300_000)
        #expect(try resumed.tusPatch(location, offset: 300_000, Array(image[300_000...])).status == 204)
        #expect(try resumed.send("GET", "/v1/panoramas/\(panoramaId)").string("sha256") == sha256Hex(image))
        await second.finish()
    }

    /// A crash between finishing an upload (its partial renamed into place) and committing it
    /// leaves the row "receiving" at full length, its file gone (swept as an orphan at start).
    /// Found by make soak: the retry built its session on a file extended with zeros, and the
    /// digest check refused it. The server now continues from what the file holds.
    @Test func anUploadWhosePartialFileWasLostInACrashResumesFromWhatItHolds() async throws {
        let first = try await ServiceHarness()
        let client = try first.client(first.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(300_000)
        let panoramaId = newID()
        let location = try #require(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count,
                                                         sha256: sha256Hex(image)).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, Array(image[0..<120_000])).status == 204)
        await first.stop()
        let partial = try #require(first.storedFiles().first { $0.hasPrefix("blobs/1/uploads/") })
        try FileManager.default.removeItem(atPath: first.dataDir + "/" + partial)

        let second = try await ServiceHarness(dataDir: first.dataDir)
        let resumed = try second.client(second.alpha)
        // The creation sent again answers what the server really holds: nothing.
        let again = try resumed.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count, sha256: sha256Hex(image))
        #expect(again.status == 201)
        #expect(again.header("Upload-Offset") == "0")
        #expect(try head(resumed, location) == 0)
        #expect(try resumed.tusPatch(location, offset: 0, image).status == 204)
        #expect(try resumed.send("GET", "/v1/panoramas/\(panoramaId)").string("sha256") == sha256Hex(image))
        await second.finish()
    }
}
