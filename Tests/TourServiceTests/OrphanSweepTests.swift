import Testing
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads

/// The sweeps' decisions: a store is swept only by the deployment that owns it, and a few
/// orphans of an interrupted write go; a database that cannot account for the stored files
/// removes nothing (toursd refuses to start on them).
@Suite struct OrphanSweepTests {
    private func refusal(stored: Int, orphans: Int, limit: Int = 100) -> String? {
        OrphanSweep(storedFiles: stored, orphans: orphans, limit: limit).refusal(database: "db", blobFolder: "blobs")
    }

    private func ownership(store: String?, blobs: Bool, named: Bool) -> StoreOwnership {
        StoreOwnership.decide(database: "mine", store: store, holdsBlobs: blobs, databaseNamesSome: named, describing: "blobs", databaseName: "db")
    }

    @Test func aFewOrphansBesideTheirDatabaseAreSwept() {
        #expect(refusal(stored: 1_000, orphans: 3) == nil)
        #expect(refusal(stored: 1_000, orphans: 100) == nil) // the limit itself is allowed
    }

    @Test func moreOrphansThanTheLimitAreRefused() throws {
        let said = try #require(refusal(stored: 1_000, orphans: 101))
        #expect(said.contains("101 stored files") && said.contains("orphanSweepLimit (100)") && said.contains("Nothing was removed"))
        #expect(refusal(stored: 10, orphans: 1, limit: 0) != nil) // 0: no orphan is ever removed
    }

    @Test func aStoreIsOwnedByTheDeploymentWhoseIdItHolds() {
        #expect(ownership(store: "mine", blobs: true, named: false) == .owned)
        // Empty and unclaimed (a first start), or holding blobs this database names (from
        // before claims, or filled by blobs copy): claimed.
        #expect(ownership(store: nil, blobs: false, named: false) == .claim)
        #expect(ownership(store: nil, blobs: true, named: true) == .claim)
    }

    @Test func anotherDeploymentsStoreOrBlobsNoRowNamesAreRefused() throws {
        // A new database beside another deployment's store: however few its tokens or rows.
        guard case .refused(let other) = ownership(store: "theirs", blobs: true, named: false) else { Issue.record("not refused"); return }
        #expect(other.contains("deployment theirs") && other.contains("missing") && other.contains("Nothing was removed"))
        guard case .refused(let empty) = ownership(store: "theirs", blobs: false, named: false) else { Issue.record("not refused"); return }
        #expect(empty.contains("deployment theirs"))
        guard case .refused(let unnamed) = ownership(store: nil, blobs: true, named: false) else { Issue.record("not refused"); return }
        #expect(unnamed.contains("names none") && unnamed.contains("move blobs aside") && unnamed.contains("Nothing was removed"))
    }
}
