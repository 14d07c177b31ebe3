import Foundation
import Testing
import TestSupport
import TestTraits
import NTSQLiteDB
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// The server's migrations: built into toursd from `migrations/`, and applied by SQLite's
/// procedure for schema changes, so that a table rebuild keeps every row.
@Suite(.hangGuard, .testThreads) struct MigrationTests {
    @Test func theBuiltInMigrationsAreTheFolders() throws {
        let folder = try Migrator.load(from: ServiceHarness.migrationsDir)
        #expect(folder == ServerMigrations.sqlite, "migrations/sqlite and ServerMigrations.swift differ: run make migrations")
        let postgresql = try Migrator.load(from: ServiceHarness.root.appendingPathComponent("migrations/postgresql").path)
        #expect(postgresql == ServerMigrations.postgresql, "migrations/postgresql and ServerMigrations.swift differ: run make migrations")
    }

    @Test func aMigrationThatRebuildsFloorsKeepsEveryFloorRoomAndPanorama() async throws {
        let harness = try await ServiceHarness(configure: ServiceHarness.onSQLite)
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let rooms = (0..<3).map { _ in (id: newID(), name: Optional("Room")) }
        #expect(try client.putPlan(floorId, mode: "newScan", rooms: rooms).status == 200)
        let panoramas = (0..<3).map { _ in newID() }
        for (index, id) in panoramas.enumerated() {
            #expect(try client.putPanorama(id, floorId: floorId, roomId: rooms[index].id, bytes: imageBytes(20_000, seed: UInt8(index))).status == 201)
        }
        let filesBefore = harness.storedFiles()
        await harness.stop()

        // SQLite's rebuild of floors (rooms and panoramas reference it ON DELETE CASCADE).
        let pool = try DatabasePool(path: harness.dataDir + "/toursd.sqlite", readerCount: 1)
        let (table, indexes) = try await pool.withWriter { db in
            (try db.first("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'floors'")?.decode("sql", as: String.self) ?? "",
             try db.query("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'floors' AND sql IS NOT NULL").compactMap { try $0.decodeIfPresent("sql", as: String.self) })
        }
        let folder = testDirectory("migrations").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for migration in ServerMigrations.sqlite {
            try migration.sql.write(toFile: folder + "/" + migration.fileName, atomically: true, encoding: .utf8)
        }
        let next = String(format: "%04d_rebuild_floors.sql", (ServerMigrations.sqlite.last?.version ?? 0) + 1)
        try tableRebuild("floors", createSQL: table, indexSQL: indexes).write(toFile: folder + "/" + next, atomically: true, encoding: .utf8)

        let reopened = try await ServiceHarness(dataDir: harness.dataDir) { ServiceHarness.onSQLite(&$0); $0.migrationsDir = folder }
        let after = try reopened.client(reopened.alpha)
        #expect(try await pool.withWriter { try Migrator.appliedVersions($0) }.last == (ServerMigrations.sqlite.last?.version ?? 0) + 1)
        #expect(try after.send("GET", "/v1/floors/\(floorId)").rooms.compactMap { $0["id"] as? String } == rooms.map(\.id))
        for (index, id) in panoramas.enumerated() {
            let panorama = try after.send("GET", "/v1/panoramas/\(id)")
            #expect(panorama.status == 200)
            #expect(panorama.string("roomId") == rooms[index].id)
            #expect(try after.send("GET", "/v1/panoramas/\(id)/content").body == imageBytes(20_000, seed: UInt8(index)))
        }
        #expect(reopened.storedFiles() == filesBefore, "files were removed as orphans")
        // Foreign keys hold again on the rebuilt table: deleting the property takes everything.
        #expect(try after.send("DELETE", "/v1/properties/\(propertyId)").status == 204)
        #expect(try await pool.withWriter { try $0.first("SELECT count(*) AS n FROM rooms")?.decodeIfPresent("n", as: Int.self) } == 0)
        await reopened.finish()
    }
}
