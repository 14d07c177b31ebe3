import Testing
@testable import TourService

/// The start-up sweep's decision: a few orphans of an interrupted write go; a database that
/// cannot account for the stored files makes toursd refuse to start, removing nothing.
@Suite struct OrphanSweepTests {
    private func refusal(stored: Int, orphans: Int, new: Bool, limit: Int = 100) -> String? {
        OrphanSweep(storedFiles: stored, orphans: orphans, databaseIsNew: new, limit: limit).refusal(database: "db", blobFolder: "blobs")
    }

    @Test func aFewOrphansBesideTheirDatabaseAreSwept() {
        #expect(refusal(stored: 1_000, orphans: 3, new: false) == nil)
        #expect(refusal(stored: 1_000, orphans: 100, new: false) == nil) // the limit itself is allowed
        #expect(refusal(stored: 0, orphans: 0, new: true) == nil) // a first start
    }

    @Test func aNewDatabaseBesideStoredFilesIsRefused() throws {
        let said = try #require(refusal(stored: 1, orphans: 1, new: true))
        #expect(said.contains("is new") && said.contains("missing") && said.contains("move blobs aside") && said.contains("Nothing was removed"))
    }

    @Test func moreOrphansThanTheLimitAreRefused() throws {
        let said = try #require(refusal(stored: 1_000, orphans: 101, new: false))
        #expect(said.contains("101 stored files") && said.contains("orphanSweepLimit (100)") && said.contains("Nothing was removed"))
        #expect(refusal(stored: 10, orphans: 1, new: false, limit: 0) != nil) // 0: no orphan is ever removed
    }
}
