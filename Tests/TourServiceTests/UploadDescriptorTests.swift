import Foundation
import Testing
import TestSupport
@testable import TourService

/// An unfinished upload holds no file descriptor between its PATCHes (security finding:
/// 20,000 creations exhausted the daemon's descriptors and cut every tenant off).
@Suite struct UploadDescriptorTests {
    /// Descriptors of this process open on files under `folder` (other tests run beside).
    private func openDescriptors(under folder: String) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) ?? "").hasPrefix(folder) }.count
    }

    @Test func unfinishedUploadsHoldNoDescriptorBetweenTheirPatches() async throws {
        let harness = try ServiceHarness()
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
}
