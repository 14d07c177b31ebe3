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
@testable import NTWebhooks

/// docs/api.md "Panoramas — resumable upload (tus 1.0.0)".
@Suite(.hangGuard, .testThreads) struct UploadAPITests {
    @Test func optionsAdvertisesTheProtocolAndItsExtensions() async throws {
        let harness = try await ServiceHarness { $0.maxPanoramaBytes = 123_456 }
        let response = try harness.client(harness.alpha).send("OPTIONS", "/v1/uploads")
        #expect(response.status == 204)
        #expect(response.header("Tus-Resumable") == "1.0.0")
        #expect(response.header("Tus-Version") == "1.0.0")
        #expect(response.header("Tus-Extension") == "creation,creation-with-upload,termination,checksum,expiration")
        #expect(response.header("Tus-Max-Size") == "123456")
        #expect(response.header("Tus-Checksum-Algorithm") == "sha1,sha256")
        await harness.finish()
    }

    @Test func piecesWithAndWithoutChecksumsBecomeThePanorama() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let image = imageBytes(300_000)
        let panoramaId = newID()
        let created = try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count)
        #expect(created.status == 201)
        #expect(created.header("Tus-Resumable") == "1.0.0")
        #expect(created.header("Upload-Offset") == "0")
        #expect(created.header("Upload-Expires")?.hasSuffix("GMT") == true)
        let location = try #require(created.header("Location"))
        #expect(location.hasPrefix("/v1/uploads/"))

        let pieces = [(0..<100_000, "sha1"), (100_000..<200_000, "sha256"), (200_000..<300_000, nil)]
        for (range, algorithm) in pieces {
            let chunk = Array(image[range])
            let patched = try client.tusPatch(location, offset: range.lowerBound, chunk, checksum: algorithm)
            #expect(patched.status == 204)
            #expect(patched.header("Upload-Offset") == String(range.upperBound))
            let head = try client.tus("HEAD", location)
            #expect(head.status == 200)
            #expect(head.header("Upload-Offset") == String(range.upperBound))
            #expect(head.header("Upload-Length") == String(image.count))
            #expect(head.header("Cache-Control") == "no-store")
            #expect(head.header("Tus-Resumable") == "1.0.0")
        }
        let panorama = try client.send("GET", "/v1/panoramas/\(panoramaId)")
        #expect(panorama.status == 200)
        #expect(panorama.string("propertyId") == propertyId)
        #expect(panorama.string("sha256") == sha256Hex(image))
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)/content").body == image)
        // Answerable after the end, for a client that missed the last answer.
        #expect(try client.tus("HEAD", location).header("Upload-Offset") == String(image.count))
        #expect(try client.tusPatch(location, offset: image.count, []).status == 204)
        #expect(harness.storedFiles() == ["blobs/1/panoramas/\(panoramaId)"])
        await harness.finish()
    }

    @Test func creationWithUploadStoresTheFirstBytes() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(5000)
        let panoramaId = newID()
        let created = try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count, body: Array(image[0..<2000]))
        #expect(created.status == 201)
        #expect(created.header("Upload-Offset") == "2000")
        let location = try #require(created.header("Location"))
        #expect(try client.tusPatch(location, offset: 2000, Array(image[2000...])).status == 204)
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)/content").body == image)
        // The whole panorama in the creation: 201 and done.
        let whole = newID()
        let single = try client.tusCreate(panoramaId: whole, floorId: floorId, length: image.count, body: image)
        #expect(single.status == 201)
        #expect(single.header("Upload-Offset") == String(image.count))
        #expect(try client.send("GET", "/v1/panoramas/\(whole)").string("sha256") == sha256Hex(image))
        await harness.finish()
    }

    @Test func aChecksumMismatchIs460AndLeavesTheOffset() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(20_000)
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: image.count).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, Array(image[0..<5000])).status == 204)
        let wrong = try client.tusPatch(location, offset: 5000, Array(image[5000..<10_000]), checksumOf: Array(image[0..<10]), algorithm: "sha256")
        #expect(wrong.status == 460)
        #expect(wrong.errorCode == "checksum_mismatch")
        #expect(try client.tus("HEAD", location).header("Upload-Offset") == "5000")
        // The right bytes again go on from there.
        #expect(try client.tusPatch(location, offset: 5000, Array(image[5000...]), checksum: "sha1").status == 204)
        await harness.finish()
    }

    @Test func theWrongOffsetIs409() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 100).header("Location"))
        let response = try client.tusPatch(location, offset: 10, imageBytes(10))
        #expect(response.status == 409)
        #expect(response.errorCode == "offset_mismatch")
        #expect(try client.tus("HEAD", location).header("Upload-Offset") == "0")
        await harness.finish()
    }

    @Test func anotherTusVersionIs412WithTusVersion() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 100).header("Location"))
        for (method, path) in [("HEAD", location), ("POST", "/v1/uploads"), ("DELETE", location)] {
            let response = try client.send(method, path, headers: ["Tus-Resumable": "0.2.2", "Upload-Length": "1"])
            #expect(response.status == 412, "\(method)")
            #expect(response.header("Tus-Version") == "1.0.0")
        }
        #expect(try client.send("HEAD", location).status == 412) // missing counts as another version
        await harness.finish()
    }

    @Test func pastTusMaxSizeIs413() async throws {
        let harness = try await ServiceHarness { $0.maxPanoramaBytes = 1000 }
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let tooLong = try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 1001)
        #expect(tooLong.status == 413)
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 500).header("Location"))
        let pastLength = try client.tusPatch(location, offset: 0, imageBytes(600))
        #expect(pastLength.status == 413)
        #expect(try client.tus("HEAD", location).header("Upload-Offset") == "0")
        await harness.finish()
    }

    @Test func deleteTerminatesAndRemovesThePartialFile() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 1000).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, imageBytes(400)).status == 204)
        #expect(harness.storedFiles().count == 1)
        let deleted = try client.tus("DELETE", location)
        #expect(deleted.status == 204)
        #expect(deleted.header("Tus-Resumable") == "1.0.0")
        #expect(try client.tus("HEAD", location).status == 404)
        #expect(try client.tusPatch(location, offset: 400, imageBytes(10)).status == 404)
        #expect(harness.storedFiles().isEmpty)
        await harness.finish()
    }

    @Test func creationSentAgainGivesTheSameUpload() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let panoramaId = newID()
        let first = try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: 1000)
        let location = try #require(first.header("Location"))
        #expect(try client.tusPatch(location, offset: 0, imageBytes(300)).status == 204)
        let again = try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: 1000)
        #expect(again.status == 201)
        #expect(again.header("Location") == location)
        #expect(again.header("Upload-Offset") == "300")
        #expect(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: 999).status == 409)
        await harness.finish()
    }

    @Test func aFinishedUploadIsTheSamePanoramaAsAOneShotUpload() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(10_000)
        let viaTus = newID(), viaPut = newID()
        let location = try #require(try client.tusCreate(panoramaId: viaTus, floorId: floorId, length: image.count).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, image).status == 204)
        #expect(try client.putPanorama(viaPut, floorId: floorId, bytes: image).status == 201)
        let tus = try #require(try client.send("GET", "/v1/panoramas/\(viaTus)").json)
        let put = try #require(try client.send("GET", "/v1/panoramas/\(viaPut)").json)
        #expect(Set(tus.keys) == Set(put.keys))
        for key in ["size", "sha256", "contentType", "floorId", "propertyId"] {
            #expect("\(tus[key] ?? "")" == "\(put[key] ?? "")", "\(key)")
        }
        // Re-sends mean the same on both paths: the same digest 200, another 409.
        #expect(try client.putPanorama(viaTus, floorId: floorId, bytes: image, digest: reprDigest(image)).status == 200)
        #expect(try client.tusCreate(panoramaId: viaPut, floorId: floorId, length: image.count, sha256: sha256Hex(image)).status == 200)
        #expect(try client.tusCreate(panoramaId: viaPut, floorId: floorId, length: image.count, sha256: sha256Hex(imageBytes(5))).status == 409)
        // Without a declared digest, the bytes are received and compared, then dropped.
        let resend = try #require(try client.tusCreate(panoramaId: viaPut, floorId: floorId, length: image.count).header("Location"))
        #expect(try client.tusPatch(resend, offset: 0, image).status == 204)
        let other = try #require(try client.tusCreate(panoramaId: viaPut, floorId: floorId, length: 10).header("Location"))
        #expect(try client.tusPatch(other, offset: 0, imageBytes(10, seed: 9)).status == 409)
        #expect(Set(harness.storedFiles()) == ["blobs/1/panoramas/\(viaTus)", "blobs/1/panoramas/\(viaPut)"])
        await harness.finish()
    }

    @Test func aDeclaredDigestThatDoesNotMatchKeepsNothing() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let panoramaId = newID()
        let location = try #require(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: 1000,
                                                         sha256: sha256Hex(imageBytes(3))).header("Location"))
        let response = try client.tusPatch(location, offset: 0, imageBytes(1000))
        #expect(response.status == 400)
        #expect(response.errorCode == "digest_mismatch")
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)").status == 404)
        #expect(try client.tus("HEAD", location).status == 404)
        #expect(harness.storedFiles().isEmpty)
        await harness.finish()
    }

    @Test func badCreationsSayWhatIsWrong() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        #expect(try client.tusCreate(panoramaId: newID(), floorId: newID(), length: 10).status == 404)
        #expect(try client.tusCreate(panoramaId: "nope", floorId: floorId, length: 10).status == 400)
        #expect(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 10, contentType: "image/gif").status == 415)
        #expect(try client.tus("POST", "/v1/uploads", headers: ["Upload-Length": "-1"]).status == 400)
        #expect(try client.tus("POST", "/v1/uploads", headers: ["Upload-Length": "10", "Upload-Metadata": "panoramaId !!!"]).status == 400)
        await harness.finish()
    }

    /// An upload past its expiry is gone for its client before the sweep removes it: a PATCH
    /// is 404 and stores nothing (the PATCH reads the row once, under the upload's lock).
    @Test func anExpiredUploadTakesNoBytesBeforeTheSweep() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 1000).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, imageBytes(100)).status == 204)
        harness.clock.moveOn(seconds: Int64(harness.config.uploadExpirySeconds) + 1)
        #expect(try client.tusPatch(location, offset: 100, imageBytes(100)).status == 404)
        #expect(try client.tus("HEAD", location).status == 404)
        harness.clock.moveOn(seconds: -(Int64(harness.config.uploadExpirySeconds) + 1))
        let head = try client.tus("HEAD", location)
        #expect(head.status == 200 && head.header("Upload-Offset") == "100", "the refused PATCH stored nothing")
        await harness.finish()
    }

    @Test func expiredUploadsAreSweptAndPanoramasNeverAre() async throws {
        let harness = try await ServiceHarness { $0.uploadSweepIntervalSeconds = 1 }
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let done = newID()
        let finished = try #require(try client.tusCreate(panoramaId: done, floorId: floorId, length: 100).header("Location"))
        #expect(try client.tusPatch(finished, offset: 0, imageBytes(100)).status == 204)
        let created = try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 1000)
        let location = try #require(created.header("Location"))
        #expect(try client.tusPatch(location, offset: 0, imageBytes(100)).status == 204)
        // Time passes: both uploads' expiry is behind it, and the sweep runs on its timer.
        harness.clock.moveOn(seconds: Int64(harness.config.uploadExpirySeconds) + 1)
        try await waitUntil("the upload expires") { harness.storedFiles().count == 1 }
        #expect(try client.tus("HEAD", location).status == 404)
        #expect(try client.tus("HEAD", finished).status == 404)
        #expect(harness.storedFiles() == ["blobs/1/panoramas/\(done)"])
        #expect(try client.send("GET", "/v1/panoramas/\(done)/content").body == imageBytes(100))
        await harness.finish()
    }
}


extension APIClient {
    /// A tus request: Tus-Resumable added.
    @discardableResult
    func tus(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) throws -> RawClient.Response {
        var headers = headers
        headers["Tus-Resumable"] = headers["Tus-Resumable"] ?? "1.0.0"
        return try send(method, target, body: body, headers: headers)
    }

    /// `extra`: more metadata (a position's `x`, `y`, `heading`).
    func tusCreate(panoramaId: String, floorId: String, length: Int, contentType: String = "image/jpeg", sha256: String? = nil,
                   body: [UInt8] = [], extra: [String: String] = [:]) throws -> RawClient.Response {
        var metadata = extra.merging(["panoramaId": panoramaId, "floorId": floorId, "contentType": contentType]) { $1 }
        if let sha256 { metadata["sha256"] = sha256 }
        let header = metadata.sorted { $0.key < $1.key }.map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
        var headers = ["Upload-Length": String(length), "Upload-Metadata": header]
        if !body.isEmpty { headers["Content-Type"] = "application/offset+octet-stream" }
        return try tus("POST", "/v1/uploads", headers: headers, body: body)
    }

    func tusPatch(_ location: String, offset: Int, _ chunk: [UInt8], checksum algorithm: String? = nil,
                  checksumOf other: [UInt8]? = nil, algorithm explicit: String? = nil) throws -> RawClient.Response {
        var headers = ["Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream"]
        if let name = algorithm ?? explicit {
            let bytes = other ?? chunk
            let digest = name == "sha1" ? StreamingDigestSHA1.hash(bytes) : sha256(bytes)
            headers["Upload-Checksum"] = "\(name) \(Data(digest).base64EncodedString())"
        }
        return try tus("PATCH", location, headers: headers, body: chunk)
    }
}
