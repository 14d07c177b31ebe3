#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
import NTObjectStorage
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// The bucket store when things go wrong: the store going away under a body and under a PATCH,
/// bytes the store changed, an object sent as parts. On rclone serve s3 of the test's own,
/// which keeps its objects across a restart (and forgets multipart uploads in progress).
@Suite(.serialized, .hangGuard, .testThreads) struct BucketStoreTests {
    /// A daemon whose blobs are in a bucket of `server`'s, with parts of 5 MiB, then
    /// `configure`d; its warnings in `logFile` when given.
    /// `through`: a proxy the daemon reaches the store by.
    static func harness(on server: S3Server, through proxy: FaultProxy? = nil, dataDir: String = testDirectory("toursd-bucket").path,
                        logFile: String? = nil, configure: @escaping (inout ToursdConfig) -> Void = { _ in }) async throws -> ServiceHarness {
        let bucket = try ServiceHarness.freshBucket(for: dataDir, environment: server.environment)
        var environment = server.environment
        if let proxy { environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(proxy.port)" }
        return try await ServiceHarness(dataDir: dataDir, logFile: logFile, logLevel: logFile == nil ? .error : .warn, alone: true,
                                        environment: environment) {
            $0.blobStore = bucket
            $0.s3PartBytes = 5 << 20
            $0.s3ConnectTimeoutMs = 2000
            $0.retryAfterSeconds = 1
            configure(&$0)
        }
    }

    /// The harness's bucket, reached directly (not through the daemon or a proxy).
    static func bucket(of harness: ServiceHarness, on server: S3Server) throws -> BucketTransfer {
        let settings = try #require(try BucketSettings.resolve(blobStore: harness.config.blobStore, endpoint: "", region: "", pathStyle: false,
                                                               environment: server.environment))
        return try BucketTransfer.open(settings, timeouts: TransferTimeouts(connectMs: 2000, stallSeconds: 10))
    }

    static func health(_ harness: ServiceHarness) throws -> String {
        try harness.client(nil).send("GET", "/healthz").text
    }

    @Test func aBodyWhoseStoreWentAwayIs503AndIsStoredOnceItIsBack() async throws {
        let server = try S3Server(.rclone)
        let harness = try await Self.harness(on: server)
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID(), image = imageBytes(2_000_000)
        // The store goes while the body arrives: it is kept locally until then, and then
        // cannot be placed.
        let writer = try RawClient(port: harness.port)
        try writer.send("PUT /v1/panoramas/\(id)?floorId=\(floorId) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.alpha)\r\n"
                        + "Content-Type: image/jpeg\r\nContent-Length: \(image.count)\r\n\r\n")
        try writer.send(Array(image[..<1_000_000]))
        server.stop()
        try writer.send(Array(image[1_000_000...]))
        let refused = try writer.readResponse()
        #expect(refused.status == 503, "\(refused.status) \(String(decoding: refused.body, as: UTF8.self))")
        #expect(refused.header("Retry-After") == "1")
        let health = try Self.health(harness)
        #expect(health.contains("\"degraded\"") && health.contains("object store"), "\(health)")
        #expect(try client.send("GET", "/v1/panoramas/\(id)").status == 404, "nothing acknowledged, nothing kept")
        #expect(harness.storedFiles().isEmpty, "\(harness.storedFiles())")
        // Back: health recovers by itself (probed), and the same request is stored.
        try server.start()
        try await waitUntil("/healthz to say ok again") { try Self.health(harness).contains("\"ok\"") }
        #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201)
        #expect(try client.send("GET", "/v1/panoramas/\(id)/content").body == image)
        #expect(harness.storedFiles() == ["blobs/1/panoramas/\(id)"])
        await harness.finish()
        server.stop()
    }

    @Test func aPatchWhoseStoreWentAwayKeepsWhatWasAcknowledged() async throws {
        let server = try S3Server(.rclone)
        let harness = try await Self.harness(on: server)
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let panoramaId = newID(), image = imageBytes(12 << 20, seed: 4)
        let location = try #require(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, Array(image[..<(3 << 20)])).status == 204)
        // A PATCH that would fill the first 5 MiB segment: the store goes in its middle.
        let writer = try RawClient(port: harness.port)
        try writer.send(patchHead(location, token: harness.alpha, offset: 3 << 20, length: 4 << 20))
        try writer.send(Array(image[(3 << 20)..<(4 << 20)]))
        server.stop()
        try? writer.send(Array(image[(4 << 20)..<(7 << 20)]))
        let refused = try? writer.readResponse()
        #expect(refused == nil || refused?.status == 503, "\(String(describing: refused?.status))")
        try server.start()
        // What was acknowledged is there, from any daemon's view: the offset the database
        // records, its bytes in the bucket.
        let head = try client.tus("HEAD", location)
        #expect(head.header("Upload-Offset") == String(3 << 20), "\(head.status) \(head.headers)")
        let offset = Int(head.header("Upload-Offset") ?? "") ?? 0
        #expect(try client.tusPatch(location, offset: offset, Array(image[offset...])).status == 204)
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)/content").body == image)
        #expect(harness.storedFiles() == ["blobs/1/panoramas/\(panoramaId)"], "the segments go once the panorama is stored")
        await harness.finish()
        server.stop()
    }

    /// The store away just as a PATCH's first bytes fill a segment: refused, and the upload
    /// goes on from what was acknowledged once it is back (the half-written buffer put back).
    @Test func aSegmentTheStoreRefusedIsPutBackForTheNextPatch() async throws {
        let server = try S3Server(.rclone)
        let harness = try await Self.harness(on: server)
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let panoramaId = newID(), image = imageBytes(6 << 20, seed: 9)
        let location = try #require(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count).header("Location"))
        let acknowledged = (5 << 20) - 1000
        #expect(try client.tusPatch(location, offset: 0, Array(image[..<acknowledged])).status == 204)
        server.stop()
        #expect(try client.tusPatch(location, offset: acknowledged, Array(image[acknowledged..<(acknowledged + 5000)])).status == 503)
        try server.start()
        #expect(try client.tus("HEAD", location).header("Upload-Offset") == String(acknowledged))
        #expect(try client.tusPatch(location, offset: acknowledged, Array(image[acknowledged..<(acknowledged + 5000)])).status == 204)
        #expect(try client.tusPatch(location, offset: acknowledged + 5000, Array(image[(acknowledged + 5000)...])).status == 204)
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)/content").body == image)
        await harness.finish()
        server.stop()
    }

    /// The local copies are kept to blobCopyBytes, the least recently used going first; one
    /// gone is fetched again when read. A fetch a stop cut short is gone at the next start.
    @Test func localCopiesAreKeptToTheirLimit() async throws {
        let server = try S3Server(.rclone)
        let dataDir = testDirectory("toursd-copies").path
        try FileManager.default.createDirectory(atPath: dataDir + "/copies", withIntermediateDirectories: true)
        try Data([1]).write(to: URL(fileURLWithPath: dataDir + "/copies/.cut-short"))
        let harness = try await Self.harness(on: server, dataDir: dataDir) { $0.blobCopyBytes = 250_000 }
        #expect(!directoryEntries(dataDir + "/copies").contains(".cut-short"))
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let images = (0..<3).map { imageBytes(100_000, seed: UInt8(20 + $0)) }
        let ids = images.map { _ in newID() }
        for (id, image) in zip(ids, images) { #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201) }
        try await waitUntil("their processing (which reads the copies) to end") { try harness.metric("toursd_panoramas_processing") == 0 && harness.metric("toursd_tiles_waiting") == 0 }
        let kept = directoryEntries(dataDir + "/copies").filter { !$0.hasPrefix(".") }
        #expect(kept.count == 2, "\(kept)")
        for (id, image) in zip(ids, images) { #expect(try client.send("GET", "/v1/panoramas/\(id)/content").body == image) }
        #expect(directoryEntries(dataDir + "/copies").filter { !$0.hasPrefix(".") }.count <= 2)
        await harness.finish()
        server.stop()
    }

    /// A round of the bucket's sweep removes what no row names (an older world map of a floor,
    /// a panorama without its row, an upload's segments without its upload, a preview of a
    /// panorama gone) and keeps what rows name.
    @Test func theSweepRemovesWhatNoRowNames() async throws {
        let server = try S3Server(.rclone)
        let dataDir = testDirectory("toursd-sweep").path
        let harness = try await Self.harness(on: server, dataDir: dataDir) { $0.orphanGraceSeconds = 0 }
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let kept = newID()
        #expect(try client.putPanorama(kept, floorId: floorId, bytes: imageBytes(1000)).status == 201)
        #expect([200, 201].contains(try client.putWorldMap(floorId, bytes: [1, 2, 3]).status))
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 5000).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, imageBytes(2000)).status == 204)
        let before = Set(harness.storedFiles())
        let gone = newID()
        let planted = ["1/panoramas/\(gone)", "1/worldmaps/\(floorId).0123456789abcdef", "1/uploads/\(newID())/000000000000000",
                       "1/previews/\(gone)/320-0123456789abcdef.jpg"]
        for name in planted { try harness.plant(name, Data([9])) }
        guard case .bucket = harness.service.blobs else { Issue.record("no bucket"); return }
        harness.clock.moveOn(seconds: 1) // the planted objects are a second old
        let removed = try await #require(harness.service.bucketSweep()).round()
        #expect(removed?.objects == planted.count)
        #expect(Set(harness.storedFiles()) == before, "\(harness.storedFiles())")
        await harness.finish()
        server.stop()
    }

    /// A second deployment (a new database: a fresh data directory, or an empty PostgreSQL
    /// database) started on a bucket another deployment keeps its blobs in: refused at start,
    /// and nothing removed; the owner's own sweep still runs.
    @Test func aNewDatabaseBesideAnotherDeploymentsBucketRemovesNothing() async throws {
        let server = try S3Server(.rclone)
        let owner = try await Self.harness(on: server) { $0.orphanGraceSeconds = 0 }
        let client = try owner.client(owner.alpha)
        let (_, floorId) = try client.makeFloor()
        for seed in 0..<3 { #expect(try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(1000, seed: UInt8(seed))).status == 201) }
        let stored = owner.storedFiles()
        let other = testDirectory("toursd-bucket-other").path
        defer { try? FileManager.default.removeItem(atPath: other) }
        let refused = await #expect(throws: StartupError.self) {
            _ = try await ServiceHarness(dataDir: other, alone: true, environment: server.environment) { $0.blobStore = owner.config.blobStore }
        }
        #expect(refused?.message.contains("belongs to deployment") == true && refused?.message.contains("Nothing was removed") == true,
                "\(refused?.message ?? "")")
        #expect(owner.storedFiles() == stored)
        let round = try await #require(owner.service.bucketSweep()).round()
        #expect(round?.objects == 0)
        #expect(owner.storedFiles() == stored)
        await owner.finish()
        server.stop()
    }

    /// Credentials the bucket refuses: a start-up refusal; refused later (a key rotated away),
    /// a 503 with Retry-After and a degraded /healthz, never a 500; back once they are good.
    @Test func credentialsTheBucketRefusesAreARefusalThenA503() async throws {
        let server = try S3Server(.rclone)
        let harness = try await Self.harness(on: server)
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        #expect(try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(1000)).status == 201)
        let secret = server.secretKey
        server.stop()
        try server.start(secretKey: "rotated-away")
        let refused = try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(1000, seed: 2))
        #expect(refused.status == 503 && refused.header("Retry-After") != nil && refused.text.contains("credentials"), "\(refused.status) \(refused.text)")
        #expect(try Self.health(harness).contains("degraded"))
        // A daemon starting with them is refused at once.
        let other = testDirectory("toursd-bucket-refused").path
        defer { try? FileManager.default.removeItem(atPath: other) }
        let error = await #expect(throws: StartupError.self) {
            _ = try await ServiceHarness(dataDir: other, alone: true, environment: server.environment.merging(["AWS_SECRET_ACCESS_KEY": secret]) { $1 }) {
                $0.blobStore = harness.config.blobStore
            }
        }
        #expect(error?.message.contains("credentials") == true, "\(error?.message ?? "")")
        // The store accepts them again: the probe finds it, and uploads go on.
        server.stop()
        try server.start(secretKey: secret)
        try await waitUntil("/healthz to be ok again", seconds: 30) { !(try Self.health(harness).contains("degraded")) }
        #expect(try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(1000, seed: 3)).status == 201)
        await harness.finish()
        server.stop()
    }

    @Test func bytesTheStoreChangedAreRefusedOnRead() async throws {
        let server = try S3Server(.rclone)
        let harness = try await Self.harness(on: server)
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID(), image = imageBytes(300_000)
        #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201)
        var changed = image
        changed[150_000] ^= 0xff
        try harness.plant("1/panoramas/\(id)", Data(changed))
        // A daemon without a copy yet (this one kept the body it sent as one).
        let copies = harness.dataDir + "/copies"
        try await waitUntil("its processing (which reads the copy) to end") { try harness.metric("toursd_panoramas_processing") == 0 && harness.metric("toursd_tiles_waiting") == 0 }
        try FileManager.default.removeItem(atPath: copies + "/" + image.sha256Name)
        let read = try client.send("GET", "/v1/panoramas/\(id)/content")
        #expect(read.status == 500)
        #expect(read.text.contains("sha-256"), "\(read.text)")
        await harness.finish()
        server.stop()
    }

    @Test func aPanoramaPastThePartSizeIsSentAsPartsAndReadWhole() async throws {
        let server = try S3Server(.moto) // which refuses parts under 5 MiB but the last
        let harness = try await Self.harness(on: server)
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID(), image = imageBytes((11 << 20) + 12345, seed: 6)
        #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201)
        // The parts went while the body arrived; a body refused after them leaves nothing.
        let refused = newID()
        #expect(try client.putPanorama(refused, floorId: floorId, bytes: image, digest: reprDigest(imageBytes(10))).status == 400)
        let bucket = try Self.bucket(of: harness, on: server)
        #expect(try bucket.multipartUploads("").isEmpty)
        #expect(try bucket.list("").map(\.key) == ["1/panoramas/\(id)", StoreOwnership.claimName])
        // A daemon without the copy asks the store for the range alone, and keeps no copy
        // (once its processing, which reads the copy, is over).
        try await waitUntil("its processing (which reads the copy) to end") { try harness.metric("toursd_panoramas_processing") == 0 && harness.metric("toursd_tiles_waiting") == 0 }
        let copies = harness.dataDir + "/copies"
        try FileManager.default.removeItem(atPath: copies + "/" + image.sha256Name)
        let range = try client.send("GET", "/v1/panoramas/\(id)/content", headers: ["Range": "bytes=5242870-5242889"])
        #expect(range.status == 206 && range.body == Array(image[5_242_870...5_242_889]))
        #expect(!directoryEntries(copies).contains(image.sha256Name))
        #expect(try client.send("GET", "/v1/panoramas/\(id)/content").body == image)
        #expect(directoryEntries(copies).contains(image.sha256Name), "a whole read makes the copy")
        let again = try client.send("GET", "/v1/panoramas/\(id)/content", headers: ["Range": "bytes=-7"])
        #expect(again.status == 206 && again.body == Array(image.suffix(7)))
        await harness.finish()
        server.stop()
    }

    /// A preview is decoded once for every daemon: kept in the bucket beside its panorama, a
    /// daemon without it fetches it rather than decoding again; it goes with the panorama.
    @Test func previewsAreKeptInTheBucketBesideTheirPanorama() async throws {
        let server = try S3Server(.rclone)
        let log = testDirectory("bucket-previews").path + ".log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let harness = try await Self.harness(on: server, logFile: log)
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID(), image = try JPEGFixture.panorama(width: 2048)
        #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201)
        // Its processing makes every width from one decode; a request after it decodes none.
        try await waitUntil("its processing") { try client.send("GET", "/v1/panoramas/\(id)").string("state") == "ready" }
        let first = try client.send("GET", "/v1/panoramas/\(id)/preview?width=1024")
        #expect(first.status == 200)
        let name = "1/previews/\(id)/1024-\(sha256Hex(image).prefix(16)).jpg"
        let bucket = try Self.bucket(of: harness, on: server)
        // Kept by the processing after it cached the preview here: a put to the bucket, which
        // in a loaded test run (the suite beside every other) has taken over 10 s. A put that
        // failed is in the daemon's log.
        do {
            try await waitUntil("the preview to be kept in the bucket", seconds: 60) { (try? bucket.get(name)) == first.body }
        } catch {
            Issue.record("the daemon's warnings: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "none")")
            throw error
        }
        #expect(try harness.metric("toursd_preview_decodes_total") == 1)
        // This daemon's own cache gone (as on a daemon that never made it): fetched, not decoded.
        try FileManager.default.removeItem(atPath: harness.dataDir + "/previews/1/\(id)")
        #expect(try client.send("GET", "/v1/panoramas/\(id)/preview?width=1024").body == first.body)
        #expect(try harness.metric("toursd_preview_decodes_total") == 1)
        #expect(try client.send("DELETE", "/v1/panoramas/\(id)").status == 204)
        #expect(try bucket.list("1/previews/").isEmpty)
        await harness.finish()
        server.stop()
    }

    /// A preview the store fails to keep with a 5xx (as rclone did once in a loaded run) is put
    /// again `retryAfterSeconds` later, in the background, `s3BackgroundAttempts` in all: a
    /// proxy in front of the store answers 500 to the first put of each preview, and 500 to
    /// every put of the next panorama's, which its processing then gives up on.
    @Test func aPreviewTheStoreFailsToKeepIsPutAgainInTheBackground() async throws {
        let server = try S3Server(.rclone)
        let refused = Mutex<(once: Set<String>, always: String?)>(([], nil))
        let proxy = try FaultProxy(upstreamPort: server.port) { method, path in
            guard method == "PUT", path.contains("/previews/") else { return nil }
            return refused.withLock { refused in
                refused.always.map { path.contains($0) } == true || refused.once.insert(path).inserted ? 500 : nil
            }
        }
        let log = testDirectory("bucket-preview-retry").path + ".log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let harness = try await Self.harness(on: server, through: proxy, logFile: log) { $0.s3BackgroundAttempts = 2 }
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let bucket = try Self.bucket(of: harness, on: server)
        let kept = newID(), image = try JPEGFixture.panorama(width: 2048)
        #expect(try client.putPanorama(kept, floorId: floorId, bytes: image).status == 201)
        // Ready once every width is kept: each put refused once, then made again.
        try await waitUntil("its processing") { try client.send("GET", "/v1/panoramas/\(kept)").string("state") == "ready" }
        let widths = try bucket.list("1/previews/\(kept)/").map(\.key)
        #expect(widths.count == harness.config.previewWidths.count, "\(widths)")
        let puts = proxy.requests.filter { $0.hasPrefix("PUT ") && $0.contains("/previews/\(kept)/") }
        for width in widths {
            let name = try #require(width.split(separator: "/").last)
            #expect(puts.filter { $0.contains(name) }.map { $0.split(separator: " ").last! } == ["500", "forwarded"], "\(puts)")
        }
        #expect(try harness.metric("toursd_preview_decodes_total") == 1)
        // A store that fails every put: given up after two attempts, the panorama ready anyway
        // (a preview is a cache; the other daemons make it again), the failure in the log.
        let lost = newID()
        refused.withLock { $0.always = lost }
        #expect(try client.putPanorama(lost, floorId: floorId, bytes: try JPEGFixture.panorama(width: 1024)).status == 201)
        try await waitUntil("its processing") { try client.send("GET", "/v1/panoramas/\(lost)").string("state") == "ready" }
        let refusals = proxy.requests.filter { $0.hasPrefix("PUT ") && $0.contains("/previews/\(lost)/") }
        #expect(refusals.allSatisfy { $0.hasSuffix(" 500") }, "\(refusals)")
        #expect(refusals.count == 2 * harness.config.previewWidths.count, "two attempts a width: \(refusals)")
        #expect(try bucket.list("1/previews/\(lost)/").isEmpty)
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("a preview cannot be kept in the bucket"))
        await harness.finish()
        proxy.stop()
        server.stop()
    }

    /// With s3PresignedReads, a panorama's bytes come from the store: a 302 to a presigned
    /// URL (which rclone checks), the Range going along; a matching ETag is still a 304 here.
    @Test func presignedReadsSendTheClientToTheStore() async throws {
        let server = try S3Server(.rclone)
        let dataDir = testDirectory("toursd-presigned").path
        let harness = try await Self.harness(on: server, dataDir: dataDir) {
            $0.s3PresignedReads = true
            $0.s3PresignedSeconds = 60
        }
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let id = newID(), image = imageBytes(100_000, seed: 12)
        #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201)
        let redirect = try client.send("GET", "/v1/panoramas/\(id)/content")
        #expect(redirect.status == 302 && redirect.header("ETag") == "\"\(sha256Hex(image))\"")
        let location = try #require(redirect.header("Location"))
        #expect(location.hasPrefix(server.endpoint) && location.contains("X-Amz-Signature="), "\(location)")
        let fetched = try runCommand("/usr/bin/curl", ["-s", "-o", harness.dataDir + "/fetched", "-w", "%{http_code}", "-H", "Range: bytes=10-19", location])
        #expect(fetched.out == "206" || fetched.out == "200", "\(fetched.out)")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: harness.dataDir + "/fetched"))) == Array(image[10...19]))
        #expect(try client.send("GET", "/v1/panoramas/\(id)/content", headers: ["If-None-Match": "\"\(sha256Hex(image))\""]).status == 304)
        // Under a share link the full-size image (the largest preview) comes through toursd,
        // never a URL that would outlive the link: revoked, nothing more is sent.
        let tourId = try #require(try client.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let made = try client.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600, "offersOriginals": true])
        let (link, share) = (try #require(made.string("url")), try #require(made.string("id")))
        let original = try harness.client(nil).send("GET", "\(link)/panoramas/\(id)/image")
        #expect(original.status == 200 && original.header("Content-Type") == "image/jpeg" && original.header("Location") == nil, "\(original.status)")
        #expect(try client.send("DELETE", "/v1/shares/\(share)").status == 204)
        #expect(try harness.client(nil).send("GET", "\(link)/panoramas/\(id)/image").status == 404)
        await harness.finish()
        server.stop()
    }

    /// A daemon killed while it sends a panorama's parts leaves a multipart upload in
    /// progress; the next daemon's sweep aborts it (moto dates it 2010: it goes by when the
    /// daemon first saw it), and the panorama is absent or whole, never half.
    @Test func aDaemonKilledMidMultipartLeavesNothingAfterTheSweep() async throws {
        let server = try S3Server(.moto)
        let dataDir = testDirectory("toursd-killed").path
        let bucketName = try ServiceHarness.freshBucket(for: dataDir, environment: server.environment)
        let settings = try #require(try BucketSettings.resolve(blobStore: bucketName, endpoint: "", region: "", pathStyle: false, environment: server.environment))
        let bucket = try BucketTransfer.open(settings, timeouts: TransferTimeouts(connectMs: 2000, stallSeconds: 10))
        let environment = server.environment.merging(["TOURSD_blobStore": bucketName, "TOURSD_s3PartBytes": String(5 << 20),
                                                      "TOURSD_orphanGraceSeconds": "1", "TOURSD_bucketSweepSeconds": "1"]) { $1 }
        let first = try ToursdProcess(dataDir: dataDir, environment: environment)
        let client = try APIClient(port: first.port, token: try first.adminToken)
        let (_, floorId) = try client.makeFloor()
        let id = newID(), image = imageBytes(40 << 20, seed: 8)
        let writer = try RawClient(port: first.port)
        try writer.send("PUT /v1/panoramas/\(id)?floorId=\(floorId) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(try first.adminToken)\r\n"
                        + "Content-Type: image/jpeg\r\nContent-Length: \(image.count)\r\n\r\n")
        // All but its last MiB: the body cannot end, so the parts' upload is still in progress
        // whenever the bucket is asked (with every byte sent, a slow listing under load once
        // found it completed already).
        try writer.send(Array(image[..<(image.count - (1 << 20))]))
        try await waitUntil("the daemon to send parts") { try !bucket.multipartUploads("").isEmpty }
        first.signal(SIGKILL)
        _ = first.wait(seconds: 10)
        #expect(try bucket.multipartUploads("").count == 1, "killed while sending parts")

        let second = try ToursdProcess(dataDir: dataDir, environment: environment)
        try await waitUntil("the sweep to abort the upload", seconds: 30) { try bucket.multipartUploads("").isEmpty }
        try await waitUntil("no object without its row", seconds: 30) { try !bucket.list("").contains { $0.key.contains(id) } }
        let read = try APIClient(port: second.port, token: try second.adminToken).send("GET", "/v1/panoramas/\(id)/content")
        #expect(read.status == 404 || read.body == image)
        second.signal(SIGTERM)
        _ = second.wait(seconds: 10)
        server.stop()
    }
}

private extension Array where Element == UInt8 {
    /// The name of a local copy of these bytes.
    var sha256Name: String { sha256Hex(self) }
}
