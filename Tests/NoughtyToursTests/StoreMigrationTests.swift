import Foundation
import Testing
import TestSupport
import TestTraits
import NTSQLiteDB
@testable import NoughtyTours

/// The local store's migrations go through the same migrator as the server's: a rebuild of
/// `properties` (floors and panoramas reference it ON DELETE CASCADE) keeps every row.
@Suite(.hangGuard, .testThreads) struct StoreMigrationTests {
    @Test func aMigrationThatRebuildsPropertiesKeepsEveryFloorAndPanorama() async throws {
        let directory = testDirectory("client-rebuild")
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = Configuration(server: URL(string: "http://127.0.0.1:9")!, token: "t", storageDirectory: directory)
        let counts: [Int]
        do {
            let tours = try await NoughtyTours(configuration: configuration)
            let property = try await tours.properties.createProperty(name: "Villa", floorCount: 2)
            let floor = try #require(try await tours.properties.floors(of: property).first)
            let session = try await tours.panoramaCapture.session(floor: floor)
            for seed in 1...3 { try await capturePanorama(session, seed: seed) }
            counts = try await tours.store.read { try Self.counts($0) }
        }
        #expect(counts == [1, 2, 3])

        let database = try Database(path: directory.appendingPathComponent("noughtytours.sqlite").path)
        let table = try #require(try database.first("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'properties'")?.decodeIfPresent("sql", as: String.self))
        let indexes = try database.query("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'properties' AND sql IS NOT NULL")
            .compactMap { try $0.decodeIfPresent("sql", as: String.self) }
        let rebuild = Migration(version: (ClientMigrations.all.last?.version ?? 0) + 1, name: "rebuild_properties",
                                sql: tableRebuild("properties", createSQL: table, indexSQL: indexes))
        #expect(try Migrator.migrate(database, ClientMigrations.all + [rebuild]) == [rebuild])
        #expect(try Self.counts(database) == counts)
        #expect(try database.query("PRAGMA foreign_key_check").isEmpty)
    }

    /// Properties, floors, panoramas.
    private static func counts(_ db: Database) throws -> [Int] {
        try ["properties", "floors", "panoramas"].map { try db.first("SELECT count(*) FROM \($0)")?.decodeIfPresent(0, as: Int.self) ?? -1 }
    }
}
