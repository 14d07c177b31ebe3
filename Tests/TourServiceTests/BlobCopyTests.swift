#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
import TestTraits
import NTObjectStorage

/// Moving a deployment from the blob folder to a bucket and back with `toursd blobs copy`:
/// everything the database names arrives, each digest checked; a second run copies nothing
/// again; the daemon started on the other side serves it all and resumes the unfinished
/// upload. A file that changed on disk, or an object that changed in the bucket, is named, not
/// copied.
@Suite(.serialized, .hangGuard, .testThreads) struct BlobCopyTests {
    @Test func aFolderIsCopiedIntoABucketServedFromItAndCopiedBack() async throws {
        let server = try S3Server(.moto)
        defer { server.stop() }
        let dataDir = testDirectory("copy-source").path
        let daemon = try ToursdProcess(dataDir: dataDir)
        let token = try daemon.adminToken
        let client = try APIClient(port: daemon.port, token: token)
        let (_, floorId) = try client.makeFloor()
        let images = (0..<3).map { imageBytes(200_000 + $0, seed: UInt8($0 + 60)) }
        let ids = images.map { _ in newID() }
        for (id, image) in zip(ids, images) { #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201) }
        let worldMap = Array(repeating: UInt8(7), count: 5000)
        #expect([200, 201].contains(try client.putWorldMap(floorId, bytes: worldMap).status))
        let partial = imageBytes(400_000, seed: 70), partialPanorama = newID()
        let location = try #require(try client.tusCreate(panoramaId: partialPanorama, floorId: floorId, length: partial.count).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, Array(partial[..<150_000])).status == 204)
        daemon.signal(SIGTERM)
        _ = daemon.wait(seconds: 10)

        let bucket = try ServiceHarness.freshBucket(for: dataDir, environment: server.environment)
        let command = server.environment.map { "\($0.key)=\($0.value)" } + [ToursdProcess.executable.path, "blobs", "copy", "--to", bucket, "--data-dir", dataDir]
        let copied = try runCommand("/usr/bin/env", command)
        #expect(copied.status == 0, "\(copied.err)")
        #expect(copied.out.contains("copied 5 blobs"), "\(copied.out)")
        let again = try runCommand("/usr/bin/env", command)
        #expect(again.out.contains("copied 0 blobs (0 bytes)") && again.out.contains("5 there already"), "\(again.out)")

        let moved = try ToursdProcess(dataDir: dataDir, environment: server.environment.merging(["TOURSD_blobStore": bucket]) { $1 })
        defer { moved.signal(SIGKILL); _ = moved.wait(seconds: 10) }
        let served = try APIClient(port: moved.port, token: token)
        for (id, image) in zip(ids, images) { #expect(try served.send("GET", "/v1/panoramas/\(id)/content").body == image) }
        #expect(try served.send("GET", "/v1/floors/\(floorId)/worldmap").body == worldMap)
        #expect(try served.tus("HEAD", location).header("Upload-Offset") == "150000")
        #expect(try served.tusPatch(location, offset: 150_000, Array(partial[150_000...])).status == 204)
        #expect(try served.send("GET", "/v1/panoramas/\(partialPanorama)/content").body == partial)

        // On the bucket meanwhile: a panorama more, the world map replaced, an upload begun.
        let late = newID(), lateImage = imageBytes(250_000, seed: 80)
        #expect(try served.putPanorama(late, floorId: floorId, bytes: lateImage).status == 201)
        let worldMapAgain = Array(repeating: UInt8(9), count: 6000)
        #expect(try served.putWorldMap(floorId, bytes: worldMapAgain).status == 200)
        let begun = imageBytes(300_000, seed: 90), begunPanorama = newID()
        let begunLocation = try #require(try served.tusCreate(panoramaId: begunPanorama, floorId: floorId, length: begun.count).header("Location"))
        #expect(try served.tusPatch(begunLocation, offset: 0, Array(begun[..<100_000])).status == 204)
        moved.signal(SIGTERM)
        _ = moved.wait(seconds: 10)

        // Back into the folder: what the bucket has and the folder has not (the two panoramas,
        // the new world map, the begun upload's bytes); the three it has already stay.
        let back = server.environment.map { "\($0.key)=\($0.value)" } + [ToursdProcess.executable.path, "blobs", "copy", "--from", bucket, "--data-dir", dataDir]
        let fetched = try runCommand("/usr/bin/env", back)
        #expect(fetched.status == 0, "\(fetched.err)")
        #expect(fetched.out.contains("copied 4 blobs") && fetched.out.contains("3 there already"), "\(fetched.out)")
        let fetchedAgain = try runCommand("/usr/bin/env", back)
        #expect(fetchedAgain.out.contains("copied 0 blobs (0 bytes)") && fetchedAgain.out.contains("7 there already"), "\(fetchedAgain.out)")
        #expect(!FileManager.default.fileExists(atPath: dataDir + "/blobs/.incoming/blobs-copy"))
        // A second run while one copies into the folder is refused, not let clear its files.
        let held = open(dataDir + "/blobs/.incoming/blobs-copy.lock", O_RDWR | O_CLOEXEC)
        #expect(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0)
        let meanwhile = try runCommand("/usr/bin/env", back)
        close(held)
        #expect(meanwhile.status == 1 && meanwhile.err.contains("another blobs copy --from"), "\(meanwhile.err)")

        let home = try ToursdProcess(dataDir: dataDir)
        let local = try APIClient(port: home.port, token: token)
        for (id, image) in zip(ids + [partialPanorama, late], images + [partial, lateImage]) {
            #expect(try local.send("GET", "/v1/panoramas/\(id)/content").body == image)
        }
        #expect(try local.send("GET", "/v1/floors/\(floorId)/worldmap").body == worldMapAgain)
        #expect(try local.tus("HEAD", begunLocation).header("Upload-Offset") == "100000")
        #expect(try local.tusPatch(begunLocation, offset: 100_000, Array(begun[100_000...])).status == 204)
        #expect(try local.send("GET", "/v1/panoramas/\(begunPanorama)/content").body == begun)
        home.signal(SIGTERM)
        _ = home.wait(seconds: 10)

        // An object changed in the bucket since its row was written: named, and nothing of it
        // takes the panorama's name in the folder.
        let settings = try #require(try BucketSettings.resolve(blobStore: bucket, endpoint: "", region: "", pathStyle: false, environment: server.environment))
        try BucketTransfer.open(settings, timeouts: TransferTimeouts(connectMs: 5000, stallSeconds: 30))
            .put("1/panoramas/\(late)", .bytes(imageBytes(250_000, seed: 81)), contentType: "application/octet-stream")
        let lateFile = dataDir + "/blobs/1/panoramas/\(late)"
        try FileManager.default.removeItem(atPath: lateFile)
        let refusedBack = try runCommand("/usr/bin/env", back)
        #expect(refusedBack.status == 1)
        #expect(refusedBack.err.contains("1/panoramas/\(late)") && refusedBack.err.contains("not the"), "\(refusedBack.err)")
        #expect(!FileManager.default.fileExists(atPath: lateFile))
        #expect(!FileManager.default.fileExists(atPath: dataDir + "/blobs/.incoming/blobs-copy"))

        // A file changed on disk since its row was written: named, not copied.
        let changed = dataDir + "/blobs/1/panoramas/\(ids[0])"
        let handle = try #require(FileHandle(forWritingAtPath: changed))
        try handle.seek(toOffset: 1000)
        try handle.write(contentsOf: Data([0xAB]))
        try handle.close()
        let other = try ServiceHarness.freshBucket(for: dataDir + "-other", environment: server.environment)
        let refused = try runCommand("/usr/bin/env", server.environment.map { "\($0.key)=\($0.value)" }
                                     + [ToursdProcess.executable.path, "blobs", "copy", "--to", other, "--data-dir", dataDir])
        #expect(refused.status == 1)
        #expect(refused.err.contains("1/panoramas/\(ids[0])") && refused.err.contains("not copied"), "\(refused.err)")
    }
}
