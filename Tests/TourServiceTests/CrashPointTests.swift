#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService

/// toursd dies (`TOURSD_CRASH_AT`: `_exit` on the spot) at each step between a file and the
/// row that names it; after a restart the state is the old one or the new one, whole: no
/// acknowledged byte lost, no row without its file, no file without its row.
@Suite(.serialized, .hangGuard, .testThreads) struct CrashPointTests {
    /// A daemon on a data directory of its own, restarted as the test asks.
    final class Station {
        let dataDir = testDirectory("crashpoint").path
        var daemon: ToursdProcess
        var client: APIClient
        let token: String

        init(crashAt: CrashPoint? = nil) throws {
            daemon = try Station.start(dataDir, crashAt)
            token = try daemon.adminToken
            client = try APIClient(port: daemon.port, token: token)
        }

        deinit {
            daemon.signal(SIGKILL)
            _ = daemon.wait(seconds: 10)
            try? FileManager.default.removeItem(atPath: dataDir)
        }

        private static func start(_ dataDir: String, _ crashAt: CrashPoint?) throws -> ToursdProcess {
            try ToursdProcess(dataDir: dataDir, environment: crashAt.map { ["TOURSD_CRASH_AT": $0.rawValue] } ?? [:])
        }

        /// Sends a request the daemon dies in, and waits (bounded) for it to have died there.
        func crash(_ request: (APIClient) throws -> Void) {
            _ = try? request(client)
            let ended = daemon.wait(seconds: 30)
            #expect(ended == .exited(CrashPoint.exitStatus), "toursd did not die at its crash point: \(String(describing: ended))")
        }

        /// Stops the daemon as an operator does, and starts it again (armed at `crashAt`).
        func restart(crashAt: CrashPoint? = nil) throws {
            if daemon.process.isRunning {
                daemon.signal(SIGTERM)
                _ = daemon.wait(seconds: 30)
            }
            daemon = try Station.start(dataDir, crashAt)
            client = try APIClient(port: daemon.port, token: token)
        }

        /// The bytes of a stored file.
        func file(_ kind: String, _ name: String) -> [UInt8]? {
            let blobs = dataDir + "/blobs"
            let tenants = (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? []
            return tenants.lazy.compactMap { FileManager.default.contents(atPath: "\(blobs)/\($0)/\(kind)/\(name)") }.first.map { Array($0) }
        }

        /// The names stored under `blobs/<tenant>/<kind>` for every tenant.
        func files(_ kind: String) -> [String] {
            let blobs = dataDir + "/blobs"
            let tenants = (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? []
            return tenants.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: "\(blobs)/\($0)/\(kind)")) ?? [] }
        }
    }

    // MARK: A resumable upload finishing

    static let uploadSteps: [CrashPoint] = [.uploadFinishing, .uploadLinked, .uploadCommitted, .uploadUnlinked]

    @Test(arguments: uploadSteps)
    func aResumableUploadKilledWhileFinishingKeepsEveryAcknowledgedByte(_ step: CrashPoint) async throws {
        let station = try Station(crashAt: step)
        let (_, floorId) = try station.client.makeFloor()
        let image = imageBytes(1_000_002, seed: 7)
        let panoramaId = newID()
        let location = try #require(try station.client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count).header("Location"))
        let first = try station.client.tusPatch(location, offset: 0, Array(image[0..<600_000]))
        #expect(first.status == 204 && first.header("Upload-Offset") == "600000")
        station.crash { _ = try $0.tusPatch(location, offset: 600_000, Array(image[600_000...])) }

        try station.restart()
        let head = try station.client.tus("HEAD", location)
        #expect(head.status == 200)
        let offset = try #require(head.header("Upload-Offset").flatMap(Int.init))
        #expect(offset >= 600_000, "HEAD answers \(offset), below the acknowledged 600000")
        if offset < image.count {
            #expect(try station.client.tusPatch(location, offset: offset, Array(image[offset...])).status == 204)
        }
        let content = try station.client.send("GET", "/v1/panoramas/\(panoramaId)/content")
        #expect(content.status == 200)
        #expect(sha256Hex(content.body) == sha256Hex(image), "the panorama is not the uploaded bytes")
        #expect(station.files("uploads").isEmpty, "a finished upload's partial file is left: \(station.files("uploads"))")
        #expect(station.files("panoramas") == [panoramaId])
    }

    // MARK: A one-shot panorama

    @Test(arguments: [CrashPoint.panoramaPlaced, .panoramaCommitted])
    func aOneShotPanoramaKilledWhileStoredIsAbsentOrWhole(_ step: CrashPoint) async throws {
        let station = try Station(crashAt: step)
        let (_, floorId) = try station.client.makeFloor()
        let image = imageBytes(300_000, seed: 9)
        let panoramaId = newID()
        station.crash { _ = try $0.putPanorama(panoramaId, floorId: floorId, bytes: image) }

        try station.restart()
        let content = try station.client.send("GET", "/v1/panoramas/\(panoramaId)/content")
        if step == .panoramaPlaced {
            // Never acknowledged: the old state, and the upload can be made again.
            #expect(content.status == 404)
            #expect(station.files("panoramas").isEmpty, "a file without its row is left")
            #expect(try station.client.putPanorama(panoramaId, floorId: floorId, bytes: image).status == 201)
        } else {
            #expect(content.status == 200)
            #expect(sha256Hex(content.body) == sha256Hex(image))
        }
        #expect(station.files("panoramas") == [panoramaId])
    }

    // MARK: A world map replaced, a plan that clears one

    @Test(arguments: [CrashPoint.worldMapPlaced, .worldMapCommitted])
    func aWorldMapKilledWhileReplacedIsTheOldOneOrTheNewOne(_ step: CrashPoint) async throws {
        let station = try Station()
        let (_, floorId) = try station.client.makeFloor()
        let old = imageBytes(70_000, seed: 3), new = imageBytes(90_000, seed: 4)
        #expect(try station.client.putWorldMap(floorId, bytes: old).status == 201)
        try station.restart(crashAt: step)
        station.crash { _ = try $0.putWorldMap(floorId, bytes: new) }

        // The start-up sweep keeps only the file the floor's row names: one, the old map's
        // bytes or the new one's (read from the disk: the API has no GET of a world map yet).
        try station.restart()
        let files = station.files("worldmaps")
        #expect(files.count == 1, "files beside the floor's one world map: \(files)")
        let stored = try #require(files.first.flatMap { station.file("worldmaps", $0) })
        #expect(sha256Hex(stored) == sha256Hex(step == .worldMapPlaced ? old : new))
    }

    @Test func aPlanKilledAfterItsCommitKeepsItAndNoClearedWorldMap() async throws {
        let station = try Station()
        let (_, floorId) = try station.client.makeFloor()
        #expect(try station.client.putWorldMap(floorId, bytes: imageBytes(50_000, seed: 5)).status == 201)
        try station.restart(crashAt: .planCommitted)
        let room = newID()
        station.crash { _ = try $0.putPlan(floorId, mode: "newScan", rooms: [(room, "Kitchen")]) }

        try station.restart()
        let floor = try station.client.send("GET", "/v1/floors/\(floorId)")
        #expect(floor.rooms.map { $0["id"] as? String } == [room])
        #expect(floor.json?["continuable"] as? Bool == false, "the new plan kept the old plan's world map")
        #expect(station.files("worldmaps").isEmpty, "the cleared world map's file is left")
    }
}
