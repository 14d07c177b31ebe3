import Testing
import NTObjectStorage
@testable import NTServiceModel
@testable import NTServiceStorage

@Suite struct BucketSweepPlanTests {
    @Test func namesAreToursdsBlobsOrLeftAlone() {
        #expect(BucketSweepPlan.key(of: "3/panoramas/abc") == BlobKey(tenant: 3, kind: .panorama, id: "abc"))
        #expect(BucketSweepPlan.key(of: "3/worldmaps/w-1") == BlobKey(tenant: 3, kind: .worldMap, id: "w-1"))
        #expect(BucketSweepPlan.key(of: "3/uploads/u/000000005242880") == BlobKey(tenant: 3, kind: .upload, id: "u"))
        #expect(BucketSweepPlan.key(of: "3/previews/abc/1024-0123456789abcdef.jpg") == BlobKey(tenant: 3, kind: .panorama, id: "abc"))
        for other in ["3/uploads/u", "3/panoramas/a/b", "x/panoramas/a", "3/other/a", "3/panoramas/", "backup.tar", "3/uploads/u/x", "3/previews/abc", "3/previews//x.jpg"] {
            #expect(BucketSweepPlan.key(of: other) == nil, "\(other)")
        }
    }

    @Test func orphansAreUnnamedAndOlderThanTheGrace() {
        let objects = [ObjectSummary(key: "1/panoramas/kept", size: 1, lastModified: 100),
                       ObjectSummary(key: "1/panoramas/old", size: 1, lastModified: 100),
                       ObjectSummary(key: "1/panoramas/young", size: 1, lastModified: 950),
                       ObjectSummary(key: "1/uploads/gone/000000000000000", size: 1, lastModified: 100),
                       ObjectSummary(key: "1/uploads/live/000000000000000", size: 1, lastModified: 100),
                       ObjectSummary(key: "someone-elses", size: 1, lastModified: 0)]
        let named: Set = [BlobKey(tenant: 1, kind: .panorama, id: "kept"), BlobKey(tenant: 1, kind: .upload, id: "live")]
        #expect(BucketSweepPlan.orphans(objects, named: named, now: 1000, grace: 100).map(\.key) == ["1/panoramas/old", "1/uploads/gone/000000000000000"])
    }

    @Test func multipartUploadsGoOnceSeenForTheGrace() {
        let upload = MultipartUpload(key: "1/panoramas/p", uploadId: "u1", initiated: 1_289_422_113)
        let first = BucketSweepPlan.staleUploads([upload], firstSeen: [:], now: 1000, grace: 60)
        #expect(first.abort.isEmpty && first.firstSeen == ["u1": 1000], "its own date (2010 on moto) is not trusted")
        let early = BucketSweepPlan.staleUploads([upload], firstSeen: first.firstSeen, now: 1030, grace: 60)
        #expect(early.abort.isEmpty && early.firstSeen == ["u1": 1000])
        let late = BucketSweepPlan.staleUploads([upload], firstSeen: early.firstSeen, now: 1060, grace: 60)
        #expect(late.abort == [upload] && late.firstSeen.isEmpty)
        #expect(BucketSweepPlan.staleUploads([], firstSeen: ["gone": 1], now: 2000, grace: 60).firstSeen.isEmpty, "what is no longer listed is forgotten")
    }
}
