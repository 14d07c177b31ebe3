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

/// An unfinished upload holds no file descriptor between its PATCHes (security finding:
/// 20,000 creations exhausted the daemon's descriptors and cut every tenant off).
@Suite(.hangGuard, .testThreads) struct UploadDescriptorTests {
    /// Descriptors of this process open on files under `folder` (other tests run beside).
    private func openDescriptors(under folder: String) -> Int {
        let descriptors = directoryEntries("/proc/self/fd")
        return descriptors.filter { ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) ?? "").hasPrefix(folder) }.count
    }

    @Test func unfinishedUploadsHoldNoDescriptorBetweenTheirPatches() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let uploads = harness.dataDir + "/blobs/"
        var locations: [String] = []
        for index in 0..<300 {
            let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 10_000).header("Location"))
            #expect(try client.tusPatch(location, offset: 0, Array(imageBytes(4_000, seed: UInt8(index % 200)))).status == 204)
            #expect(try client.tus("HEAD", location).header("Upload-Offset") == "4000")
            locations.append(location)
        }
        // 300 live sessions, no PATCH in flight: no partial file open.
        let held = openDescriptors(under: uploads)
        #expect(held == 0, "300 unfinished uploads hold \(held) descriptors")
        // Each continues and completes with its descriptor opened again for the PATCH.
        for (index, location) in locations.prefix(5).enumerated() {
            #expect(try client.tusPatch(location, offset: 4_000, Array(imageBytes(6_000, seed: UInt8(index)))).status == 204)
        }
        await harness.finish()
    }

    /// Security finding: unfinished uploads and their metadata filled the database and the
    /// disk, uncapped. Each tenant has a quota of them, by count and by reserved bytes.
    @Test func aTenantsUnfinishedUploadsAreCappedByCountAndBytes() async throws {
        let harness = try await ServiceHarness { config in
            config.maxUnfinishedUploadsPerTenant = 3
            config.maxUnfinishedUploadBytesPerTenant = 10_000
        }
        let alpha = try harness.client(harness.alpha), beta = try harness.client(harness.beta)
        let (_, floorId) = try alpha.makeFloor()
        let (_, betaFloor) = try beta.makeFloor()
        var locations: [String] = []
        for _ in 0..<3 {
            let created = try alpha.tusCreate(panoramaId: newID(), floorId: floorId, length: 1_000)
            #expect(created.status == 201)
            locations.append(created.header("Location") ?? "")
        }
        let fourth = try alpha.tusCreate(panoramaId: newID(), floorId: floorId, length: 1_000)
        #expect(fourth.status == 507)
        #expect(fourth.errorCode == "insufficient_storage")
        #expect((fourth.json?["error"] as? [String: Any])?["message"] as? String == "this tenant has 3 unfinished uploads, the most it may have: finish or delete some first")
        #expect(try beta.tusCreate(panoramaId: newID(), floorId: betaFloor, length: 1_000).status == 201) // another tenant's own quota
        // One ended: room again, within the bytes: 2,000 held, 8,000 more fits, 8,001 does not.
        #expect(try alpha.tus("DELETE", locations[0]).status == 204)
        #expect(try alpha.tusCreate(panoramaId: newID(), floorId: floorId, length: 8_001).status == 507)
        #expect(try alpha.tusCreate(panoramaId: newID(), floorId: floorId, length: 8_000).status == 201)
        await harness.finish()
    }
}
