import Foundation
import Testing
import NTLogging
import NTPostgresDB
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

/// Two daemons on one PostgreSQL and one blob folder (issue 16 "tus across instances"): a
/// newer PATCH arriving at the other daemon than a stalled one wins, without corrupting the
/// file, within the takeover wait; a HEAD on the other daemon leaves a writer's file alone.
@Suite(.serialized, .hangGuard, .testThreads) struct SharedUploadTests {
    /// Two daemons, each alone, on one database of a cluster of the test's own (stopped by the
    /// test) and one blob folder.
    private final class TwoDaemons {
        let cluster: PostgresCluster
        let blobs = testDirectory("shared-blobs").path
        let first: ServiceHarness
        let second: ServiceHarness
        /// The daemons' database.
        let url: String
        /// Where the first daemon logs (`firstLogLevel` and up).
        let firstLog = testDirectory("first-daemon").path + ".log"

        init(firstLogLevel: LogLevel = .warn, configure: @escaping (inout ToursdConfig) -> Void = { _ in }) async throws {
            let cluster = try PostgresCluster()
            self.cluster = cluster
            do {
                let (url, blobs) = (try cluster.database("shared"), blobs)
                self.url = url
                // On a run with a bucket (TOURSD_TEST_S3), one bucket for both.
                let bucket = ProcessInfo.processInfo.environment["TOURSD_TEST_S3"]?.isEmpty == false ? try ServiceHarness.freshBucket(for: blobs) : nil
                let shared: (inout ToursdConfig) -> Void = {
                    $0.databaseUrl = url
                    $0.blobDir = blobs
                    if let bucket { $0.blobStore = bucket }
                    $0.migrationsDir = ServiceHarness.root.appendingPathComponent("migrations/postgresql").path
                    $0.databasePoolSize = 2
                    configure(&$0)
                }
                first = try await ServiceHarness(logFile: firstLog, logLevel: firstLogLevel, alone: true, configure: shared)
                second = try await ServiceHarness(alone: true, configure: shared)
            } catch {
                cluster.stop()
                throw error
            }
        }

        /// A long PATCH on the first daemon (durable steps of 64 KiB), stalled after 300,000
        /// bytes of a 600,000-byte image, once the second daemon reports 3 of its steps.
        func stalledWrite() async throws -> StalledWrite {
            let onFirst = try first.client(first.alpha), onSecond = try second.client(first.alpha)
            let (_, floorId) = try onFirst.makeFloor()
            let image = imageBytes(600_000)
            let (writer, location, panoramaId) = try beginLongPatch(onFirst, port: first.port, floorId: floorId, image: image, sent: 300_000)
            let stalled = StalledWrite(writer: writer, location: location, panoramaId: panoramaId, image: image, onSecond: onSecond)
            // A step is made once 64 KiB more are written, wherever the body's reads end (CI
            // once saw the fourth at 259,072), and the last part of a batch may wait for more
            // body: of 300,000 bytes, at least 218,081 are durable, so three steps. Each is an
            // fsync and a commit, beside the whole suite on one disk. A wait that runs out says
            // what the second daemon last answered, what the first one logged, and what the
            // database records.
            var answered = ""
            do {
                try await waitUntil("the durable steps to be reported by the other daemon", seconds: 60) {
                    let head = try onSecond.tus("HEAD", location)
                    answered = "\(head.status) \(head.headers) \(head.text)"
                    return (Int(head.header("Upload-Offset") ?? "") ?? -1) >= 3 * 65_536
                }
            } catch let error as TimedOut {
                let recorded = try? PostgresConnection(url: url).query("SELECT id, \"offset\" FROM uploads", arguments: [])
                throw TimedOut(description: "\(error.description); the second daemon last answered \(answered); "
                               + "the database records \(String(describing: recorded)); the first daemon logged: "
                               + ((try? String(contentsOfFile: firstLog, encoding: .utf8)) ?? "nothing"))
            }
            return stalled
        }

        /// Waits until the first daemon has logged `line` (up to a minute: beside the whole
        /// PostgreSQL pass, CI once took longer than 10 s to see a broken lock connection).
        func firstLogged(_ line: String) async throws {
            try await waitUntil("the first daemon to log \"\(line)\"", seconds: 60) {
                (try? String(contentsOfFile: firstLog, encoding: .utf8))?.contains(line) == true
            }
        }

        /// Each daemon serves panorama `id` as `image`, its digest and its bytes.
        func expectPanorama(_ id: String, is image: [UInt8]) throws {
            for daemon in [first, second] {
                let client = try daemon.client(first.alpha) // one database: the token works on both
                let panorama = try client.send("GET", "/v1/panoramas/\(id)")
                #expect(panorama.string("sha256") == sha256Hex(image), "\(panorama.status) \(panorama.text)")
                #expect(try client.send("GET", "/v1/panoramas/\(id)/content").body == image)
            }
        }

        func finish() async {
            await second.finish()
            await first.finish()
            try? FileManager.default.removeItem(atPath: blobs)
            try? FileManager.default.removeItem(atPath: firstLog)
        }
    }

    struct StalledWrite {
        let writer: RawClient
        let location: String
        let panoramaId: String
        let image: [UInt8]
        let onSecond: APIClient

        func offsetOnSecond() throws -> Int { Int(try onSecond.tus("HEAD", location).header("Upload-Offset") ?? "") ?? -1 }
    }

    @Test func aNewerPatchOnAnotherDaemonWinsOverAStalledOne() async throws {
        let daemons = try await TwoDaemons()
        defer { daemons.cluster.stop() }
        let (first, second) = (daemons.first, daemons.second)
        let onFirst = try first.client(first.alpha)
        let onSecond = try second.client(first.alpha) // one database: the token works on both
        let (location, panoramaId, image) = try uploadBegun(onFirst)
        // The older PATCH, on the first daemon: claimed (its 100 Continue), then stalled halfway.
        let older = try RawClient(port: first.port)
        try older.send(patchHead(location, token: first.alpha, offset: 100_000, length: 500_000, expectContinue: true))
        #expect(try older.readResponse(bodyExpected: false).status == 100)
        try older.send(Array(image[100_000..<300_000]))
        // The newer PATCH, on the second daemon, from the offset the database records: the first
        // daemon is told to stop, lets go, and the newer one proceeds.
        let started = ContinuousClock.now
        let newer = try onSecond.tusPatch(location, offset: 100_000, Array(image[100_000...]))
        #expect(newer.status == 204, "\(newer.status) \(newer.text)")
        #expect(newer.header("Upload-Offset") == String(image.count))
        #expect(ContinuousClock.now - started < .seconds(Int(first.config.uploadTakeoverSeconds)))
        // The older one's next bytes are refused; nothing it sent reaches the file.
        try? older.send(Array(image[300_000..<600_000]))
        let refused = try? older.readResponse()
        #expect(refused == nil || refused?.status == 409)
        try daemons.expectPanorama(panoramaId, is: image)
        await daemons.finish()
    }

    /// A HEAD on another daemon while a long PATCH is being written: it reports the fsynced
    /// offset the writer recorded at its durable steps, and leaves the partial file alone (a
    /// session opened there once cut the file under the writer, whose next bytes then landed
    /// after a hole).
    @Test func aHeadOnAnotherDaemonReportsTheDurableStepsAndCutsNothing() async throws {
        // A body timeout longer than the test: the stalled PATCH must still be writing when its
        // lock connection breaks (a loaded CI run took past the 30 s default to get there).
        let daemons = try await TwoDaemons { $0.uploadDurableStepBytes = 64 * 1024; $0.bodyBatchBytes = 16 * 1024; $0.bodyTimeoutMs = 150_000 }
        defer { daemons.cluster.stop() }
        // The second daemon reports the steps the first made durable: what the first recorded.
        let stalled = try await daemons.stalledWrite()
        let (writer, image, panoramaId) = (stalled.writer, stalled.image, stalled.panoramaId)
        // The writer may still make a step of the bytes already sent while the HEAD is asked:
        // the answer is what was recorded at the HEAD, between the records read before and after.
        let recorded = { try PostgresConnection(url: daemons.url).first("SELECT \"offset\" FROM uploads")?.decodeIfPresent("offset", as: Int.self) ?? -1 }
        let before = try recorded()
        let reported = try stalled.offsetOnSecond()
        let after = try recorded()
        #expect(before >= 3 * 65_536 && before <= reported && reported <= after && after <= 300_000,
                "recorded \(before) before the HEAD, reported \(reported), recorded \(after) after")
        // The writer goes on undisturbed, and the panorama is the image, byte for byte.
        try writer.send(Array(image[300_000...]))
        let done = try writer.readResponse()
        #expect(done.status == 204 && done.header("Upload-Offset") == String(image.count), "\(done.status)")
        try daemons.expectPanorama(panoramaId, is: image)
        await daemons.finish()
    }

    /// An offset retrieval on one daemon, waiting for that daemon's own transfer to end, while
    /// a newer request on the other daemon takes the upload over (behind a balancer, the cut
    /// request arriving late): it answers the offset the database records, the one the other
    /// continues from. It once answered 404: the session it had opened ended under it. The
    /// first retrieval in the IETF draft and in tus.
    @Test(arguments: zip(["Upload-Draft-Interop-Version: 6", "Tus-Resumable: 1.0.0"], [204, 200]))
    func anOffsetRetrievalTakenOverByAnotherDaemonAnswersTheRecordedOffset(speaking protocolField: String, answering status: Int) async throws {
        let daemons = try await TwoDaemons(firstLogLevel: .debug) {
            $0.uploadDurableStepBytes = 64 * 1024; $0.bodyBatchBytes = 16 * 1024; $0.bodyTimeoutMs = 150_000; $0.uploadTakeoverGraceMs = 120_000
        }
        defer { daemons.cluster.stop() }
        let stalled = try await daemons.stalledWrite()
        // On the first daemon, the retrieval waits for the stalled transfer (up to 120 s).
        let asked = try RawClient(port: daemons.first.port, timeoutSeconds: 60)
        try asked.send("HEAD \(stalled.location) HTTP/1.1\r\nHost: t\r\n\(protocolField)\r\n\r\n")
        try await daemons.firstLogged("an offset retrieval waits for the transfer still writing the upload")
        // On the second, a retrieval of the draft (which, unlike tus's, takes the upload over).
        let second = try stalled.onSecond.send("HEAD", stalled.location, headers: ["Upload-Draft-Interop-Version": "6"])
        try await daemons.firstLogged("another daemon asks for an upload this one writes")
        let first = try asked.readResponse(bodyExpected: false)
        let recorded = try PostgresConnection(url: daemons.url).first("SELECT \"offset\" FROM uploads")?.decodeIfPresent("offset", as: Int.self) ?? -1
        #expect(second.status == 204 && first.status == status, "the second answered \(second.status) \(second.text), the first \(first.status) \(first.text)")
        #expect(recorded >= 3 * 65_536 && first.header("Upload-Offset") == String(recorded) && second.header("Upload-Offset") == String(recorded),
                "recorded \(recorded), the first answered \(first.header("Upload-Offset") ?? "none"), the second \(second.header("Upload-Offset") ?? "none")")
        #expect(!protocolField.hasPrefix("Upload-Draft") || first.header("Upload-Complete") == "?0")
        // The upload goes on from there on the second daemon; the stalled transfer's next bytes are refused.
        let rest = try stalled.onSecond.tusPatch(stalled.location, offset: recorded, Array(stalled.image[recorded...]))
        #expect(rest.status == 204, "\(rest.status) \(rest.text)")
        try? stalled.writer.send(Array(stalled.image[300_000...]))
        let refused = try? stalled.writer.readResponse()
        #expect(refused == nil || refused?.status == 409, "\(refused?.status ?? 0)")
        try daemons.expectPanorama(stalled.panoramaId, is: stalled.image)
        await daemons.finish()
    }

    /// The connection holding a daemon's upload locks breaks (the database restarted, a
    /// network fault): another daemon may take the upload at once, so the daemon stops its
    /// writer: its next bytes would otherwise go on into the file another daemon now writes
    /// (and, once that one finished, into the panorama's file itself).
    @Test func aDaemonWhoseLockConnectionBreaksStopsItsWriter() async throws {
        // A body timeout longer than the test: the stalled PATCH must still be writing when its
        // lock connection breaks (a loaded CI run took past the 30 s default to get there).
        let daemons = try await TwoDaemons { $0.uploadDurableStepBytes = 64 * 1024; $0.bodyBatchBytes = 16 * 1024; $0.bodyTimeoutMs = 150_000 }
        defer { daemons.cluster.stop() }
        let stalled = try await daemons.stalledWrite()
        let (writer, location, image, panoramaId) = (stalled.writer, stalled.location, stalled.image, stalled.panoramaId)
        // Every connection to the database is cut, the locks' among them.
        let cut = try runCommand("/usr/bin/psql", ["\(daemons.cluster.url)/postgres", "-qAtc",
                                                   "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'shared'"])
        #expect(cut.status == 0, "\(cut.err)")
        try await daemons.firstLogged("lock went with its database connection") // its writer stops
        // The client resumes on the second daemon and finishes (from the offset it reports).
        var resumed: RawClient.Response?
        try await waitUntil("the upload to be finished on the second daemon") {
            let offset = try stalled.offsetOnSecond()
            guard offset >= 0 else { return false }
            resumed = try stalled.onSecond.tusPatch(location, offset: offset, Array(image[offset...]))
            return resumed?.status == 204
        }
        // The stalled writer wakes and sends other bytes: none of them reach the panorama.
        try? writer.send([UInt8](repeating: 0xEE, count: 300_000))
        let refused = try? writer.readResponse()
        #expect(refused == nil || refused?.status == 409, "\(refused?.status ?? 0)")
        try daemons.expectPanorama(panoramaId, is: image)
        await daemons.finish()
    }

    /// A PATCH arriving at one daemon while the other finishes the upload (its last byte in,
    /// the panorama being committed) waits for that finish and finds the upload complete. The
    /// finishing daemon once let go of the upload at once when asked: the other then worked on
    /// a half-finished upload, and opened the partial file that the finish was removing (a 500).
    @Test func aPatchOnAnotherDaemonWaitsForAFinishUnderWay() async throws {
        let daemons = try await TwoDaemons(firstLogLevel: .info)
        defer { daemons.cluster.stop() }
        let (first, second) = (daemons.first, daemons.second)
        let (location, panoramaId, image) = try uploadBegun(try first.client(first.alpha))
        // No panorama row can be written for now: the first daemon's finish waits there, its
        // file linked, its commit to come.
        let holder = try PostgresConnection(url: daemons.url)
        try holder.execute("BEGIN")
        try holder.execute("LOCK TABLE panoramas IN EXCLUSIVE MODE")
        let last = try RawClient(port: first.port)
        try last.send(Array(patchHead(location, token: first.alpha, offset: 100_000, length: 500_000).utf8) + Array(image[100_000...]))
        try await waitUntil("the first daemon's finish to wait for the panorama's row") {
            try holder.query("SELECT 1 FROM pg_locks WHERE NOT granted", arguments: []).count == 1
        }
        // A PATCH from an older offset arrives at the second daemon, which asks for the upload.
        let stale = try RawClient(port: second.port)
        try stale.send(patchHead(location, token: first.alpha, offset: 100_000, length: 500_000, expectContinue: true))
        try await daemons.firstLogged("another daemon asks for an upload")
        try holder.execute("COMMIT")
        let done = try last.readResponse()
        #expect(done.status == 204 && done.header("Upload-Offset") == String(image.count), "\(done.status) \(done.text)")
        // The second daemon had the upload only once the finish was done: complete.
        let refused = try stale.readResponse()
        #expect(refused.status == 409 && refused.text.contains("is complete"), "\(refused.status) \(refused.text)")
        try daemons.expectPanorama(panoramaId, is: image)
        await daemons.finish()
    }
}
