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

/// What toursd does when it opens its data directory.
@Suite(.hangGuard, .testThreads) struct StartupTests {
    private let quiet = Logger(sink: LogSink(fd: -1), level: .error)

    private func config(_ dataDir: String) -> ToursdConfig {
        var config = ToursdConfig()
        config.dataDir = dataDir
        config.migrationsDir = ServiceHarness.migrationsDir
        return config
    }

    private func temporaryDirectory() -> String {
        testDirectory("startup").path
    }

    @Test func aFirstStartMakesTenantDefaultWithItsTokenInAPrivateFile() async throws {
        let dataDir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        _ = try await SyncService.open(try Deployment(config(dataDir).storage), config: config(dataDir), logger: quiet)
        let path = dataDir + "/admin.token"
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let token = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("nt_"))
        #expect(try await Admin.tokens(config(dataDir), logger: quiet).map(\.tenant) == ["default"])
        // A second start makes no other token and leaves the file alone.
        _ = try await SyncService.open(try Deployment(config(dataDir).storage), config: config(dataDir), logger: quiet)
        #expect(try await Admin.tokens(config(dataDir), logger: quiet).count == 1)
        #expect(try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) == token)
    }

    @Test func filesLeftByACrashAreRemovedAndStoredOnesKept() async throws {
        let harness = try await ServiceHarness(alone: true) // one daemon's start-up sweep of its own folders
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let kept = newID()
        try client.putPanorama(kept, floorId: floorId, bytes: imageBytes(100))
        await harness.stop()
        // What a crash leaves: a temporary file, and a file renamed into place whose row was
        // never committed.
        let orphan = harness.dataDir + "/blobs/1/panoramas/" + newID()
        #expect(FileManager.default.createFile(atPath: harness.dataDir + "/tmp/abc.part", contents: Data([1, 2])))
        #expect(FileManager.default.createFile(atPath: orphan, contents: Data([3])))
        var config = harness.config
        if !config.databaseUrl.isEmpty {
            // A shared database: a young file may be another daemon's, between its placing and
            // its commit. It stays; once older than the grace it is an orphan.
            _ = try await SyncService.open(try Deployment(config.storage), config: config, logger: quiet)
            #expect(FileManager.default.fileExists(atPath: orphan))
            config.orphanGraceSeconds = 0
        }
        _ = try await SyncService.open(try Deployment(config.storage), config: config, logger: quiet)
        let files = harness.storedFiles()
        #expect(files.count == 1)
        #expect(files.first?.hasSuffix(kept) == true)
        try? FileManager.default.removeItem(atPath: harness.dataDir)
    }

    /// Previews and tiles are derived: a crash mid-deletion leaves a panorama's folder without
    /// its row, a crash mid-making a temporary file or tiles folder. Start-up removes those and
    /// keeps the previews and tiles of the panoramas there are.
    @Test func previewsAndTilesLeftByACrashAreRemovedAndLiveOnesKept() async throws {
        let harness = try await ServiceHarness(alone: true) { $0.tileMinWidth = 1024 }
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let kept = newID()
        #expect(try client.putPanorama(kept, floorId: floorId, bytes: try JPEGFixture.panorama(width: 2048), contentType: "image/jpeg").status == 201)
        let previews = harness.dataDir + "/previews"
        // Made files only: tiles are written in a `.tmp-` folder, then it is renamed.
        let files = { filesUnder(previews).filter { $0.hasSuffix(".jpg") && !$0.contains(".tmp") } }
        // Its processing makes a preview per width and 30 tiles in the background.
        let made = harness.config.previewWidths.count + 30
        try await waitUntil("the previews and the tiles on disk", seconds: 60) {
            try client.send("GET", "/v1/panoramas/\(kept)").string("state") == "ready" && files().count == made
        }
        await harness.stop()
        let tenantFolder = try #require(FileManager.default.contentsOfDirectory(atPath: previews).first)
        let gone = "\(previews)/\(tenantFolder)/\(newID())"
        let halfMade = ["\(previews)/\(tenantFolder)/\(kept)/320-abc.123.tmp", "\(previews)/\(tenantFolder)/\(kept)/tiles-abc.tmp-123/0/f0_0.jpg"]
        for path in [gone + "/320-abc.jpg", gone + "/tiles-abc/0/f0_0.jpg"] + halfMade {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: path, contents: Data([1])))
        }
        _ = try await SyncService.open(try Deployment(harness.config.storage), config: harness.config, logger: quiet)
        #expect(!FileManager.default.fileExists(atPath: gone))
        #expect(halfMade.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
        #expect(!FileManager.default.fileExists(atPath: "\(previews)/\(tenantFolder)/\(kept)/tiles-abc.tmp-123"))
        #expect(files().count == made && files().allSatisfy { $0.contains(kept) })
        try? FileManager.default.removeItem(atPath: harness.dataDir)
    }

    @Test func aFailingMigrationStopsStartWithTheFileNamed() async throws {
        let dataDir = temporaryDirectory()
        let migrations = try ServiceHarness.migrations(adding: "0999_broken.sql", "CREATE TABLE oops (; ")
        defer {
            try? FileManager.default.removeItem(atPath: dataDir)
            try? FileManager.default.removeItem(atPath: migrations)
        }
        var config = config(dataDir)
        config.migrationsDir = migrations
        let error = await #expect(throws: StartupError.self) { _ = try await SyncService.open(try Deployment(config.storage), config: config, logger: quiet) }
        #expect(error?.message.contains("0999_broken.sql") == true)
        // The migrations before it stand, and the database still opens with them.
        try FileManager.default.removeItem(atPath: migrations + "/0999_broken.sql")
        _ = try await SyncService.open(try Deployment(config.storage), config: config, logger: quiet)
    }
}
