#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
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

/// docs/api.md "Panoramas — one-shot upload".
@Suite(.hangGuard, .testThreads) struct PanoramaAPITests {
    /// The inode of a stored file, to tell whether it was written again.
    private func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    @Test func firstStoreIs201AndTheBytesComeBackWhole() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let image = imageBytes(200_000, signature: ImageSignature.png)
        let id = newID()
        let stored = try client.putPanorama(id, floorId: floorId, bytes: image, digest: reprDigest(image), contentType: "image/png")
        #expect(stored.status == 201)
        #expect(stored.string("id") == id)
        #expect(stored.string("propertyId") == propertyId)
        #expect(stored.string("floorId") == floorId)
        #expect(stored.json?["roomId"] is NSNull)
        #expect(stored.string("contentType") == "image/png")
        #expect(stored.int("size") == image.count)
        #expect(stored.string("sha256") == sha256Hex(image))
        let content = try client.send("GET", "/v1/panoramas/\(id)/content")
        #expect(content.status == 200)
        #expect(content.body == image)
        #expect(content.header("Content-Type") == "image/png")
        #expect(content.header("ETag") == "\"\(sha256Hex(image))\"")
        #expect(content.header("Repr-Digest") == reprDigest(image))
        await harness.finish()
    }

    @Test func aResendWithTheSameDigestIs200AndWritesNoSecondFile() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(50_000)
        let id = newID()
        #expect(try client.putPanorama(id, floorId: floorId, bytes: image, digest: reprDigest(image)).status == 201)
        let files = harness.storedFiles()
        let path = harness.dataDir + "/" + (files.first ?? "")
        let before = inode(path)
        // Declared digest: answered before the body is read.
        let declared = try client.putPanorama(id, floorId: floorId, bytes: image, digest: reprDigest(image))
        #expect(declared.status == 200)
        // No digest declared: the body is read, hashed, found equal, and dropped.
        let undeclared = try client.putPanorama(id, floorId: floorId, bytes: image)
        #expect(undeclared.status == 200)
        #expect(undeclared.string("sha256") == sha256Hex(image))
        #expect(harness.storedFiles() == files)
        #expect(inode(path) == before)
        await harness.finish()
    }

    @Test func anotherDigestForTheSameIdIs409() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID()
        let image = imageBytes(1000)
        try client.putPanorama(id, floorId: floorId, bytes: image)
        let other = imageBytes(1000, seed: 5)
        let declared = try client.putPanorama(id, floorId: floorId, bytes: other, digest: reprDigest(other))
        #expect(declared.status == 409)
        #expect(declared.errorCode == "conflict")
        let undeclared = try client.putPanorama(id, floorId: floorId, bytes: other)
        #expect(undeclared.status == 409)
        #expect(try client.send("GET", "/v1/panoramas/\(id)/content").body == image)
        // Once (CI, three daemons on PostgreSQL) none was found right after that GET: the
        // entries naming the panorama, listed another way, tell a missed listing from a file gone.
        let stored = harness.storedFiles()
        #expect(stored.count == 1, "\(stored); naming the panorama: \((try? FileManager.default.subpathsOfDirectory(atPath: harness.dataDir))?.filter { $0.contains(id) } ?? [])")
        await harness.finish()
    }

    /// A re-send that arrives while the first request is still storing (the client gave up
    /// waiting and sent again), one-shot or resumable: it waits its turn and is answered as a
    /// re-send, never refused; one file is kept.
    @Test func sendsOfOnePanoramaInFlightTogetherAllSucceed() async throws {
        let harness = try await ServiceHarness()
        let setup = try harness.client(harness.alpha)
        let (_, floorId) = try setup.makeFloor()
        let image = imageBytes(400_000)
        let id = newID()
        let port = harness.port, token = harness.alpha
        let answers = Mutex<[(resumable: Bool, status: Int)]>([])
        let senders = (0..<8).map { sender in
            Thread.detachedTask {
                let resumable = sender % 4 == 3
                let status: Int
                do {
                    let client = try APIClient(port: port, token: token)
                    status = resumable ? try client.tusCreate(panoramaId: id, floorId: floorId, length: image.count, body: image).status
                                       : try client.putPanorama(id, floorId: floorId, bytes: image).status
                } catch {
                    status = 0
                }
                answers.withLock { $0.append((resumable, status)) }
            }
        }
        for sender in senders { await sender.value }
        let all = answers.withLock { $0 }
        #expect(all.filter(\.resumable).allSatisfy { $0.status == 201 }, "answers: \(all)")
        let oneShot = all.filter { !$0.resumable }.map(\.status)
        #expect(oneShot.allSatisfy { $0 == 200 || $0 == 201 }, "one-shot answers: \(oneShot)")
        #expect(oneShot.filter { $0 == 201 }.count <= 1)
        #expect(try setup.send("GET", "/v1/panoramas/\(id)/content").body == image)
        #expect(harness.storedFiles().count == 1, "\(harness.storedFiles())")
        await harness.finish()
    }

    /// A panorama file left without its row (its removal failed) does not block the id: the
    /// next store replaces it.
    @Test func aFileWithoutItsRowIsReplaced() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let first = newID()
        try client.putPanorama(first, floorId: floorId, bytes: imageBytes(100))
        #expect(harness.storedFiles().count == 1)
        let id = newID()
        try harness.plant("1/panoramas/\(id)", Data("left over".utf8))
        let image = imageBytes(5000, seed: 9)
        #expect(try client.putPanorama(id, floorId: floorId, bytes: image).status == 201)
        #expect(try client.send("GET", "/v1/panoramas/\(id)/content").body == image)
        await harness.finish()
    }

    @Test func aDigestMismatchIs400AndKeepsNothing() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let id = newID()
        let response = try client.putPanorama(id, floorId: floorId, bytes: imageBytes(70_000), digest: reprDigest(imageBytes(10)))
        #expect(response.status == 400)
        #expect(response.errorCode == "digest_mismatch")
        #expect(try client.send("GET", "/v1/panoramas/\(id)").status == 404)
        #expect(harness.storedFiles().isEmpty)
        #expect(try client.send("GET", "/v1/properties/\(propertyId)/status").int("panoramaCount") == 0)
        await harness.finish()
    }

    @Test(arguments: ["image/gif", "text/plain", ""])
    func otherMediaTypesAre415(type: String) async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let response = try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(10), contentType: type)
        #expect(response.status == 415)
        #expect(response.errorCode == "unsupported_media_type")
        await harness.finish()
    }

    /// The quick start's random bytes, a README renamed .jpg, an empty file, a PNG sent as a
    /// JPEG: 415 naming what the bytes are not, nothing stored; the same through tus.
    @Test func bytesNotOfTheirDeclaredTypeAre415AndNothingIsKept() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let refused: [([UInt8], String)] = [
            (Array("# README\n".utf8), "image/jpeg"), ([], "image/jpeg"), ([0xD8, 0xFF, 0xD8, 0xFF], "image/jpeg"),
            (imageBytes(100, signature: ImageSignature.png), "image/jpeg"), (imageBytes(100), "image/png"),
            (imageBytes(100), "image/heic"), (imageBytes(100, signature: [0, 0, 0, 0x18] + Array("ftypavif".utf8)), "image/heic"),
        ]
        for (bytes, type) in refused {
            let response = try client.putPanorama(newID(), floorId: floorId, bytes: bytes, contentType: type)
            #expect(response.status == 415 && response.errorCode == "unsupported_media_type", "\(type) \(bytes.prefix(8))")
            #expect(response.text.contains("the bytes are not \(type)"))
        }
        // Through tus: the last PATCH is the 415, and the upload ends with nothing kept.
        let readme = Array(String(repeating: "# README\n", count: 100).utf8)
        let created = try client.tusCreate(panoramaId: newID(), floorId: floorId, length: readme.count)
        let location = try #require(created.header("Location"))
        let last = try client.tusPatch(location, offset: 0, readme)
        #expect(last.status == 415 && last.errorCode == "unsupported_media_type" && last.text.contains("the bytes are not image/jpeg"))
        #expect(try client.tus("HEAD", location).status == 404)
        #expect(harness.storedFiles().isEmpty)
        await harness.finish()
    }

    /// A body the IETF resumable-upload draft marks as a part is never stored as the whole
    /// panorama: under a version served it is the first part of an upload (201 with its
    /// Location), under none it is refused; one marked complete is stored as any other.
    @Test func aBodyMarkedAsPartOfAnUploadIsNeverStoredAsThePanorama() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let part = imageBytes(1_000)
        for marks in [["Upload-Draft-Interop-Version": "6", "Upload-Complete": "?0"], ["Upload-Draft-Interop-Version": "3", "Upload-Incomplete": "?1"]] {
            let id = newID()
            let begun = try client.send("PUT", "/v1/panoramas/\(id)?floorId=\(floorId)", body: part, headers: marks.merging(["Content-Type": "image/jpeg"]) { $1 })
            #expect(begun.status == 201 && begun.header("Location")?.hasPrefix("/v1/uploads/") == true && begun.header("Upload-Offset") == "1000",
                    "\(marks): \(begun.status) \(begun.text)")
            if harness.config.resumableInterimResponses {
                #expect(begun.interims.map(\.status) == [104] && begun.interims.first?.header("Location") == begun.header("Location"))
            } else {
                #expect(begun.interims.isEmpty)
            }
            #expect(try client.send("GET", "/v1/panoramas/\(id)").status == 404)
        }
        for marks in [["Upload-Complete": "?0;a=1"], ["Upload-Draft-Interop-Version": "4", "Upload-Complete": "?0"],
                      ["Upload-Draft-Interop-Version": "8", "Upload-Complete": "yes"]] {
            let id = newID()
            let refused = try client.send("PUT", "/v1/panoramas/\(id)?floorId=\(floorId)", body: part, headers: marks.merging(["Content-Type": "image/jpeg"]) { $1 })
            #expect(refused.status == 400 && refused.errorCode == "bad_request" && refused.interims.isEmpty, "\(marks): \(refused.status) \(refused.text)")
            #expect(try client.send("GET", "/v1/panoramas/\(id)").status == 404)
        }
        #expect(harness.storedFiles().filter { !$0.contains("/uploads/") }.isEmpty)
        for marks in [["Upload-Draft-Interop-Version": "6", "Upload-Complete": "?1"], ["Upload-Draft-Interop-Version": "3", "Upload-Incomplete": "?0"],
                      ["Upload-Draft-Interop-Version": "4", "Upload-Complete": "?1"]] {
            let stored = try client.send("PUT", "/v1/panoramas/\(newID())?floorId=\(floorId)", body: part, headers: marks.merging(["Content-Type": "image/jpeg"]) { $1 })
            #expect(stored.status == 201, "\(marks): \(stored.status) \(stored.text)")
        }
        #expect(StructuredField.boolean(" ?1 ; x=y") == true && StructuredField.boolean("?0") == false)
        #expect(StructuredField.boolean("1") == nil && StructuredField.boolean("?10") == nil && StructuredField.boolean("") == nil)
        await harness.finish()
    }

    @Test func heicAndJpegWithParametersAreAccepted() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        #expect(try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(20, signature: ImageSignature.heic), contentType: "image/heic").status == 201)
        #expect(try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(10), contentType: "IMAGE/JPEG; q=1").status == 201)
        await harness.finish()
    }

    @Test(arguments: ["sha-256=abc", "sha-256=:!!:", "sha-512=:AAAA:", "sha-256=:AAAA:"])
    func malformedReprDigestsAre400(header: String) async throws {
        let harness = try await ServiceHarness()
        let client = harness.inProcess(harness.alpha)
        let (_, floorId) = try await client.makeFloor()
        let response = try await client.send("PUT", "/v1/panoramas/\(newID())?floorId=\(floorId)", body: imageBytes(10),
                                             headers: ["Content-Type": "image/jpeg", "Repr-Digest": header])
        #expect(response.status == 400)
        #expect(response.errorCode == "bad_request")
        await harness.finish()
    }

    @Test func theFloorAndRoomMustExist() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        #expect(try client.putPanorama(newID(), floorId: newID(), bytes: imageBytes(10)).status == 404)
        #expect(try client.putPanorama(newID(), floorId: floorId, roomId: newID(), bytes: imageBytes(10)).status == 404)
        #expect(try client.send("PUT", "/v1/panoramas/\(newID())", body: imageBytes(10), headers: ["Content-Type": "image/jpeg"]).status == 400)
        #expect(harness.storedFiles().isEmpty)
        await harness.finish()
    }

    @Test func overTheLimitIs413BeforeTheBody() async throws {
        let harness = try await ServiceHarness { $0.maxPanoramaBytes = 1000 }
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let response = try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(1001))
        #expect(response.status == 413)
        #expect(response.errorCode == "payload_too_large")
        #expect(harness.storedFiles().isEmpty)
        await harness.finish()
    }

    @Test func rangesEtagsAndConditionalRequests() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let image = imageBytes(1000)
        let id = newID()
        try client.putPanorama(id, floorId: floorId, bytes: image)
        let path = "/v1/panoramas/\(id)/content"
        let middle = try client.send("GET", path, headers: ["Range": "bytes=100-199"])
        #expect(middle.status == 206)
        #expect(middle.body == Array(image[100..<200]))
        #expect(middle.header("Content-Range") == "bytes 100-199/1000")
        #expect(try client.send("GET", path, headers: ["Range": "bytes=990-"]).body == Array(image[990...]))
        #expect(try client.send("GET", path, headers: ["Range": "bytes=-10"]).body == Array(image[990...]))
        #expect(try client.send("GET", path, headers: ["Range": "bytes=900-5000"]).body == Array(image[900...]))
        let outside = try client.send("GET", path, headers: ["Range": "bytes=1000-"])
        #expect(outside.status == 416)
        #expect(outside.header("Content-Range") == "bytes */1000")
        #expect(try client.send("GET", path, headers: ["Range": "bytes=0-1,5-6"]).status == 200) // several: whole
        let etag = try #require(middle.header("ETag"))
        #expect(try client.send("GET", path, headers: ["If-None-Match": etag]).status == 304)
        let head = try client.send("HEAD", path)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "1000")
        #expect(head.body.isEmpty)
        await harness.finish()
    }

    @Test func deletingAPanoramaRemovesItsFile() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let id = newID()
        try client.putPanorama(id, floorId: floorId, bytes: imageBytes(100))
        #expect(harness.storedFiles().count == 1)
        #expect(try client.send("DELETE", "/v1/panoramas/\(id)").status == 204)
        #expect(harness.storedFiles().isEmpty)
        #expect(try client.send("GET", "/v1/panoramas/\(id)").status == 404)
        #expect(try client.send("DELETE", "/v1/panoramas/\(id)").status == 404)
        await harness.finish()
    }

    /// A real full disk (a 2 MB tmpfs): 507, no row, no partial file, and the server goes on.
    @Test func aFullDiskIs507AndLeavesNothingPartial() async throws {
        let mountPoint = testDirectory("full").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mounting a tmpfs needs root: \(mounted.err)")
        defer {
            // Lazily: the service's database files may still be open; a plain umount would fail
            // (busy) and leave the mount behind on every run.
            _ = try? runCommand("/bin/umount", ["-l", mountPoint])
            try? FileManager.default.removeItem(atPath: mountPoint)
        }
        let harness = try await ServiceHarness(dataDir: mountPoint + "/data")
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let id = newID()
        let response = try client.putPanorama(id, floorId: floorId, bytes: imageBytes(3 << 20))
        #expect(response.status == 507)
        #expect(response.errorCode == "insufficient_storage")
        #expect(response.text.contains("\"retryable\":true"))
        #expect(harness.storedFiles().isEmpty)
        let after = try harness.client(harness.alpha)
        #expect(try after.send("GET", "/v1/panoramas/\(id)").status == 404)
        #expect(try after.send("GET", "/v1/properties/\(propertyId)/status").int("panoramaCount") == 0)
        // Room again: a small one is stored.
        let small = try after.putPanorama(newID(), floorId: floorId, bytes: imageBytes(1000))
        #expect(small.status == 201, "\(small.status) \(small.text)")
        await harness.stop()
    }
}
