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

/// docs/api.md "Panorama": where a panorama stands on its floor's plan, given at its creation
/// by any of the three upload paths, stored and returned wherever the panorama is.
@Suite(.hangGuard, .testThreads) struct PanoramaPositionTests {
    private func position(_ response: RawClient.Response) -> [String: Double]? {
        (response.json?["position"] as? [String: Any])?.compactMapValues { ($0 as? NSNumber)?.doubleValue }
    }

    @Test func eachUploadPathStoresThePositionItWasGiven() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let image = imageBytes(2_000)
        // One-shot: query parameters; a heading is kept as its equivalent in [0, 360).
        let oneShot = newID()
        let put = try client.send("PUT", "/v1/panoramas/\(oneShot)?floorId=\(floorId)&x=2.5&y=-1.25&heading=-90", body: image,
                                  headers: ["Content-Type": "image/jpeg"])
        #expect(put.status == 201, "\(put.text)")
        #expect(position(put) == ["x": 2.5, "y": -1.25, "heading": 270])
        // tus: Upload-Metadata.
        let viaTus = newID()
        let created = try client.tusCreate(panoramaId: viaTus, floorId: floorId, length: image.count, extra: ["x": "4", "y": "3", "height": "1.2"])
        let location = try #require(created.header("Location"), "\(created.status) \(created.text)")
        #expect(try client.tusPatch(location, offset: 0, image).status == 204)
        let tus = try client.send("GET", "/v1/panoramas/\(viaTus)")
        #expect(position(tus) == ["x": 4, "y": 3, "height": 1.2]) // no heading given: none; the camera's height kept
        #expect((tus.json?["position"] as? [String: Any])?["heading"] is NSNull)
        // The IETF draft (iOS's background URLSession): query parameters of its creation.
        let viaDraft = newID()
        let draft = try client.send("PUT", "/v1/panoramas/\(viaDraft)?floorId=\(floorId)&x=0&y=7.5&heading=359.5&height=1.35", body: image,
                                    headers: ["Content-Type": "image/jpeg", "Upload-Draft-Interop-Version": "6", "Upload-Complete": "?1"])
        #expect(draft.status == 201, "\(draft.text)")
        #expect(position(try client.send("GET", "/v1/panoramas/\(viaDraft)")) == ["x": 0, "y": 7.5, "heading": 359.5, "height": 1.35])
        // The draft's other creation, POST /v1/uploads, reads the same parameters.
        let viaPost = newID()
        let posted = try client.send("POST", "/v1/uploads?panoramaId=\(viaPost)&floorId=\(floorId)&x=-2&y=3.25&heading=45", body: image,
                                     headers: ["Content-Type": "image/jpeg", "Upload-Draft-Interop-Version": "6", "Upload-Complete": "?1"])
        #expect(posted.status == 201, "\(posted.text)")
        #expect(position(try client.send("GET", "/v1/panoramas/\(viaPost)")) == ["x": -2, "y": 3.25, "heading": 45])
        // docs/api.md: a re-send with another position is the same panorama (200), and keeps the first.
        let resent = try client.send("PUT", "/v1/panoramas/\(oneShot)?floorId=\(floorId)&x=9&y=9", body: image, headers: ["Content-Type": "image/jpeg"])
        #expect(resent.status == 200 && position(resent) == ["x": 2.5, "y": -1.25, "heading": 270], "\(resent.text)")
        // None given: null, as every older panorama.
        let unplaced = newID()
        #expect(try client.putPanorama(unplaced, floorId: floorId, bytes: image).json?["position"] is NSNull)
        // The tour document and the event carry it too.
        let property = try #require(try client.send("GET", "/v1/properties/\(propertyId)").json)
        let tourId = try #require(property["tourId"] as? String)
        let tour = try #require(try client.send("GET", "/v1/tours/\(tourId)").json)
        let floors = try #require(tour["floors"] as? [[String: Any]])
        let panoramas = try #require(floors.first?["panoramas"] as? [[String: Any]])
        let positions = Dictionary(uniqueKeysWithValues: panoramas.map { ($0["id"] as? String ?? "", $0["position"] as? [String: Any]) })
        #expect(positions.count == 5)
        #expect((positions[oneShot] ?? nil)?["heading"] as? Double == 270)
        #expect((positions[viaTus] ?? nil)?["x"] as? Double == 4)
        #expect(positions[unplaced] ?? nil == nil)
        let events = try #require(try client.send("GET", "/v1/events?limit=100").json?["items"] as? [[String: Any]])
        let stored = events.first { ($0["data"] as? [String: Any])?["id"] as? String == oneShot }
        #expect(((stored?["data"] as? [String: Any])?["position"] as? [String: Any])?["y"] as? Double == -1.25)
        await harness.finish()
    }

    /// A position that does not read is a 400 saying why, on every path, and nothing is kept.
    @Test(arguments: ["x=1", "y=1", "heading=10", "x=1&y=nan", "x=inf&y=1", "x=1e3&y=1", "x=0x10&y=1", "x=1.&y=2", "x=--1&y=2",
                      "x=10001&y=0", "x=0&y=-10000.5", "x=1&y=1&heading=361", "x=1&y=1&heading=", "x=&y=1"])
    func aPositionThatDoesNotReadIsRefused(query: String) async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID()
        let put = try client.send("PUT", "/v1/panoramas/\(id)?floorId=\(floorId)&\(query)", body: imageBytes(500), headers: ["Content-Type": "image/jpeg"])
        #expect(put.status == 400 && put.errorCode == "bad_request", "\(query): \(put.status) \(put.text)")
        let draft = try client.send("PUT", "/v1/panoramas/\(id)?floorId=\(floorId)&\(query)", body: imageBytes(500),
                                    headers: ["Content-Type": "image/jpeg", "Upload-Draft-Interop-Version": "6", "Upload-Complete": "?1"])
        #expect(draft.status == 400, "\(query): \(draft.status) \(draft.text)")
        let pairs = Dictionary(uniqueKeysWithValues: query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        })
        #expect(try client.tusCreate(panoramaId: id, floorId: floorId, length: 500, extra: pairs).status == 400, "\(query)")
        #expect(try client.send("GET", "/v1/panoramas/\(id)").status == 404)
        #expect(harness.storedFiles().isEmpty)
        await harness.finish()
    }
}
