import Foundation
import Testing
import TestSupport
@testable import TourService

/// Two daemons on one PostgreSQL and one blob folder (issue 16 "tus across instances"): a
/// newer PATCH arriving at the other daemon than a stalled one wins, without corrupting the
/// file, within the takeover wait.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SharedUploadTests {
    @Test func aNewerPatchOnAnotherDaemonWinsOverAStalledOne() async throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let url = try cluster.database("shared")
        let blobs = testDirectory("shared-blobs").path
        let shared: (inout ToursdConfig) -> Void = {
            $0.databaseUrl = url
            $0.blobDir = blobs
            $0.migrationsDir = ServiceHarness.root.appendingPathComponent("migrations/postgresql").path
            $0.databasePoolSize = 4
        }
        let first = try ServiceHarness(configure: shared)
        let second = try ServiceHarness(configure: shared)
        let onFirst = try first.client(first.alpha)
        let onSecond = try second.client(first.alpha) // one database: the token works on both
        let (_, floorId) = try onFirst.makeFloor()
        let image = imageBytes(600_000)
        let panoramaId = newID()
        let location = try #require(try onFirst.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count).header("Location"))
        #expect(try onFirst.tusPatch(location, offset: 0, Array(image[0..<100_000])).status == 204)
        // The older PATCH, on the first daemon: claimed (its 100 Continue), then stalled halfway.
        let older = try RawClient(port: first.port)
        try older.send("PATCH \(location) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(first.alpha)\r\nTus-Resumable: 1.0.0\r\n"
                       + "Content-Type: application/offset+octet-stream\r\nUpload-Offset: 100000\r\nContent-Length: 500000\r\n"
                       + "Expect: 100-continue\r\n\r\n")
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
        for client in [onFirst, onSecond] {
            #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)").string("sha256") == sha256Hex(image))
            #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)/content").body == image)
        }
        await second.finish()
        await first.finish()
        try? FileManager.default.removeItem(atPath: blobs)
    }
}
