#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
import NTObjectStorage

/// `toursd backup DEST` while clients upload: the copy serves, what it lists is whole, and
/// everything acknowledged before the backup began is in it.
@Suite(.hangGuard, .testThreads) struct BackupTests {
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

    /// With a bucket: the database and a manifest of the objects it names, each checked to be
    /// there; the copy serves them from the bucket. An object missing fails the backup.
    @Test func aBackupWithABucketWritesTheDatabaseAndAManifestOfItsObjects() async throws {
        let server = try S3Server(.rclone)
        defer { server.stop() }
        let dataDir = testDirectory("backup-bucket").path
        let bucket = try ServiceHarness.freshBucket(for: dataDir, environment: server.environment)
        let environment = server.environment.merging(["TOURSD_blobStore": bucket]) { $1 }
        let daemon = try ToursdProcess(dataDir: dataDir, environment: environment)
        defer { daemon.signal(SIGKILL); _ = daemon.wait(seconds: 10) }
        let token = try daemon.adminToken
        let client = try APIClient(port: daemon.port, token: token)
        let (_, floorId) = try client.makeFloor()
        let images = (0..<3).map { imageBytes(100_000 + $0, seed: UInt8($0 + 40)) }
        let ids = images.map { _ in newID() }
        for (id, image) in zip(ids, images) { #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201) }
        let partial = imageBytes(300_000, seed: 50), partialPanorama = newID()
        let location = try #require(try client.tusCreate(panoramaId: partialPanorama, floorId: floorId, length: partial.count).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, Array(partial[..<120_000])).status == 204)

        let command = environment.map { "\($0.key)=\($0.value)" }
        let destination = testDirectory("backup-bucket-copy").path
        let backup = try runCommand("/usr/bin/env", command + [ToursdProcess.executable.path, "backup", destination, "--data-dir", dataDir])
        #expect(backup.status == 0, "\(backup.err)")
        #expect(backup.out.contains("blobs.manifest naming its 4 objects"), "\(backup.out)")
        let manifest = try String(contentsOfFile: destination + "/blobs.manifest", encoding: .utf8).split(separator: "\n")
        for (id, image) in zip(ids, images) {
            #expect(manifest.contains("1/panoramas/\(id)\t\(image.count)\t\(sha256Hex(image))"[...]), "\(manifest)")
        }
        #expect(manifest.contains("1/uploads/\(location.split(separator: "/").dropFirst(2).first ?? "")\t120000\t"[...]), "\(manifest)")

        daemon.signal(SIGKILL)
        _ = daemon.wait(seconds: 10)
        // Restored, the copy is a deployment of its own: it does not start on the bucket its
        // origin owns (whose newer objects its sweep would remove) until told it replaces it.
        let beside = try runCommand("/usr/bin/env", command + [ToursdProcess.executable.path, "serve", "--port", "0", "--data-dir", destination], timeoutSeconds: 60)
        #expect(beside.status == 1 && beside.err.contains("toursd deployment adopt"), "\(beside.status) \(beside.err)")
        let adopted = try runCommand("/usr/bin/env", command + [ToursdProcess.executable.path, "deployment", "adopt", "--data-dir", destination])
        #expect(adopted.status == 0 && adopted.out.contains("the database is now deployment"), "\(adopted.err)")
        let copy = try ToursdProcess(dataDir: destination, environment: environment)
        defer { copy.signal(SIGKILL); _ = copy.wait(seconds: 10) }
        let restored = try APIClient(port: copy.port, token: token)
        for (id, image) in zip(ids, images) { #expect(try restored.send("GET", "/v1/panoramas/\(id)/content").body == image) }
        #expect(try restored.tus("HEAD", location).header("Upload-Offset") == "120000")

        // An object the database names gone from the bucket: the backup says which, and fails.
        let settings = try #require(try BucketSettings.resolve(blobStore: bucket, endpoint: "", region: "", pathStyle: false, environment: server.environment))
        try BucketTransfer.open(settings, timeouts: TransferTimeouts(connectMs: 2000, stallSeconds: 10)).delete("1/panoramas/\(ids[1])")
        let broken = try runCommand("/usr/bin/env", command + [ToursdProcess.executable.path, "backup", testDirectory("backup-broken").path, "--data-dir", dataDir])
        #expect(broken.status != 0)
        #expect(broken.err.contains("1/panoramas/\(ids[1])"), "\(broken.err)")
    }
}
