#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport

/// `toursd backup DEST` while clients upload: the copy serves, what it lists is whole, and
/// everything acknowledged before the backup began is in it.
@Suite(.timeLimit(.minutes(3))) struct BackupTests {
    @Test func aBackupTakenWhileEightClientsUploadServesEveryAcknowledgedUploadWhole() async throws {
        let dataDir = testDirectory("backup-source").path
        let destination = testDirectory("backup-copy").path
        defer {
            try? FileManager.default.removeItem(atPath: dataDir)
            try? FileManager.default.removeItem(atPath: destination)
        }
        let daemon = try ToursdProcess(dataDir: dataDir)
        defer { daemon.signal(SIGKILL); _ = daemon.wait(seconds: 10) }
        let token = try daemon.adminToken
        let setup = try APIClient(port: daemon.port, token: token)
        let (propertyId, floorId) = try setup.makeFloor()
        // A resumable upload half sent and acknowledged.
        let partialImage = imageBytes(1_000_000, seed: 200)
        let partialPanorama = newID()
        let location = try #require(try setup.tusCreate(panoramaId: partialPanorama, floorId: floorId, length: partialImage.count).header("Location"))
        #expect(try setup.tusPatch(location, offset: 0, Array(partialImage[0..<600_000])).status == 204)

        // Eight clients upload panoramas one after another until told to stop (bounded: 400
        // each, far more than fit in the time a backup takes).
        let acknowledged = Mutex<[String: UInt8]>([:])
        let stop = Atomic<Bool>(false)
        let port = daemon.port
        let uploaders = (0..<8).map { client in
            Thread.detachedTask {
                guard let api = try? APIClient(port: port, token: token) else { return }
                for round in 0..<400 where !stop.load(ordering: .relaxed) {
                    let seed = UInt8(client * 30 + round % 30), id = newID()
                    if (try? api.putPanorama(id, floorId: floorId, bytes: imageBytes(150_000, seed: seed)))?.status == 201 {
                        acknowledged.withLock { $0[id] = seed }
                    }
                }
            }
        }
        try await waitUntil("16 panoramas acknowledged") { acknowledged.withLock { $0.count } >= 16 }
        let before = acknowledged.withLock { $0 }
        let backup = try runCommand(ToursdProcess.executable.path, ["backup", destination, "--data-dir", dataDir])
        stop.store(true, ordering: .relaxed)
        for uploader in uploaders { await uploader.value }
        #expect(backup.status == 0, "\(backup.err)")
        #expect(backup.out.contains("serve it with"))
        let uploaded = acknowledged.withLock { $0 }
        #expect(uploaded.count > before.count, "the uploads did not go on during the backup")

        let copy = try ToursdProcess(dataDir: destination)
        defer { copy.signal(SIGKILL); _ = copy.wait(seconds: 10) }
        let client = try APIClient(port: copy.port, token: token)
        for (id, seed) in before {
            let content = try client.send("GET", "/v1/panoramas/\(id)/content")
            #expect(content.status == 200, "panorama \(id), acknowledged before the backup, is missing")
            #expect(content.body == imageBytes(150_000, seed: seed))
        }
        let tourId = try #require(try client.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let listed = (try client.send("GET", "/v1/tours/\(tourId)").json?["floors"] as? [[String: Any]] ?? [])
            .flatMap { $0["panoramas"] as? [[String: Any]] ?? [] }.compactMap { $0["id"] as? String }
        #expect(listed.count >= before.count)
        for id in listed {
            let seed = try #require(uploaded[id], "the copy lists \(id), which nobody uploaded")
            #expect(try client.send("GET", "/v1/panoramas/\(id)/content").body == imageBytes(150_000, seed: seed))
        }
        // The resumable upload resumes in the copy from what was acknowledged, and completes.
        let head = try client.tus("HEAD", location)
        #expect(head.header("Upload-Offset") == "600000")
        #expect(try client.tusPatch(location, offset: 600_000, Array(partialImage[600_000...])).status == 204)
        #expect(try client.send("GET", "/v1/panoramas/\(partialPanorama)/content").body == partialImage)
        // And the source is untouched by what the copy did.
        #expect(try setup.tus("HEAD", location).header("Upload-Offset") == "600000")
    }

    @Test func aBackupRefusesAFolderThatIsNotEmpty() throws {
        let destination = testDirectory("backup-full").path
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        try "x".write(toFile: destination + "/something", atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let result = try runCommand(ToursdProcess.executable.path, ["backup", destination, "--data-dir", destination])
        #expect(result.status != 0)
        #expect(result.err.contains("holds no toursd database") || result.err.contains("not empty"))
    }
}
