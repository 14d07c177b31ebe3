#if canImport(Glibc)
import Glibc
#endif
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

/// docs/security.md "Uploads outlive their grant", as a phone in a background session lives it:
/// a 60-second capture grant begins a 100 MB tus upload and a 100 MB IETF draft upload; their
/// bytes trickle over a slow link while the grant expires (the daemons' clock is moved past
/// it, mid-transfer); the link is cut; both resume through their upload URLs, the expired
/// grant still in the header, and finish whole. The grant is refused for anything else; a
/// revoked grant's upload cannot go on.
@Suite(.hangGuard, .testThreads) struct GrantExpiryDrillTests {
    private static let size = 100_000_000
    private static let chunk = 1 << 20

    /// Sends `count` bytes of `image` from `offset`, a chunk at a time (the slow link).
    private func trickle(_ writer: RawClient, _ image: [UInt8], from offset: Int, count: Int) throws {
        var sent = offset
        while sent < offset + count {
            let end = min(sent + Self.chunk, offset + count)
            try writer.send(Array(image[sent..<end]))
            sent = end
        }
    }

    /// An upload resumed from the offset its HEAD answers (something between what the cut
    /// request's first part made durable and all it sent), at most three times.
    private func resume(_ name: String, _ head: () throws -> RawClient.Response, _ send: (Int) throws -> RawClient.Response) throws {
        for _ in 0..<3 {
            let asked = try head()
            let offset = try #require(Int(asked.header("Upload-Offset") ?? ""), "\(name) HEAD: \(asked.status)")
            #expect((1...36 * Self.chunk).contains(offset), "\(name): \(offset)")
            let answer = try send(offset)
            if answer.status == 409 { continue }
            #expect((200..<300).contains(answer.status), "\(name): \(answer.status) \(answer.text)")
            return
        }
        Issue.record("\(name): the offset kept moving")
    }

    private func grant(_ tenant: APIClient, _ propertyId: String, seconds: Int) throws -> (id: String, token: String) {
        let made = try tenant.send("POST", "/v1/grants", json: ["scopes": ["capture"], "propertyIds": [propertyId], "expiresInSeconds": seconds])
        #expect(made.status == 201, "\(made.text)")
        return (try #require(made.string("id")), try #require(made.string("token")))
    }

    @Test func uploadsBegunWithAGrantFinishAfterItExpiresAndEndWhenItIsRevoked() async throws {
        let harness = try await ServiceHarness()
        let tenant = try harness.client(harness.alpha)
        let (propertyId, floorId) = try tenant.makeFloor()
        let capture = try grant(tenant, propertyId, seconds: 60)
        // Long enough for 100 MB through a balancer to debug-built daemons on a loaded run.
        let phone = try APIClient(port: harness.port, token: capture.token, timeoutSeconds: 120)
        let image = imageBytes(Self.size, seed: 5)
        let (tusPanorama, draftPanorama) = (newID(), newID())
        let draftMarks = ["Upload-Draft-Interop-Version": "6"]

        // Both uploads begun with the grant.
        let tusLocation = try #require(try phone.tusCreate(panoramaId: tusPanorama, floorId: floorId, length: Self.size).header("Location"))
        let begun = try phone.send("POST", "/v1/uploads?panoramaId=\(draftPanorama)&floorId=\(floorId)", body: Array(image[0..<Self.chunk]),
                                   headers: draftMarks.merging(["Upload-Complete": "?0", "Content-Type": "image/jpeg"]) { $1 })
        #expect(begun.status == 201, "\(begun.text)")
        let draftLocation = try #require(begun.header("Location"))

        // Their bytes trickle straight to one daemon (a balancer in front may hold a body back).
        let port = harness.daemonPorts[0]
        let tusLink = try RawClient(port: port, timeoutSeconds: 60)
        try tusLink.send(patchHead(tusLocation, token: capture.token, offset: 0, length: Self.size))
        let draftLink = try RawClient(port: port, timeoutSeconds: 60)
        try draftLink.send("PATCH \(draftLocation) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(capture.token)\r\nUpload-Draft-Interop-Version: 6\r\n"
                           + "Content-Type: application/partial-upload\r\nUpload-Offset: \(Self.chunk)\r\nUpload-Complete: ?1\r\n"
                           + "Content-Length: \(Self.size - Self.chunk)\r\n\r\n")
        try trickle(tusLink, image, from: 0, count: 30 * Self.chunk)
        try trickle(draftLink, image, from: Self.chunk, count: 30 * Self.chunk)

        // The grant expires with both in flight.
        harness.clock.moveOn(seconds: 61)
        let refused = try phone.send("GET", "/v1/properties/\(propertyId)")
        #expect(refused.status == 401 && refused.errorCode == "grant_expired", "\(refused.text)")
        #expect(try phone.tusCreate(panoramaId: newID(), floorId: floorId, length: 1000).status == 401)
        let uploadId = String(tusLocation.split(separator: "/")[2])
        #expect(try phone.tus("HEAD", "/v1/uploads/\(uploadId)").status == 401) // its plain URL needs a live grant
        try trickle(tusLink, image, from: 30 * Self.chunk, count: 5 * Self.chunk)
        try trickle(draftLink, image, from: 31 * Self.chunk, count: 5 * Self.chunk)
        // The link is cut.
        shutdown(tusLink.fd, Int32(SHUT_RDWR))
        shutdown(draftLink.fd, Int32(SHUT_RDWR))

        // Both resume through their URLs, the expired grant in the header as the session sent it,
        // as their clients do: ask the offset, send the rest; a 409 (the cut request's last
        // bytes made durable after the answer, on another daemon) asks again.
        try resume("tus", { try phone.tus("HEAD", tusLocation) }) { offset in
            try phone.tusPatch(tusLocation, offset: offset, Array(image[offset...]))
        }
        try resume("draft", { try phone.send("HEAD", draftLocation, headers: draftMarks) }) { offset in
            try phone.send("PATCH", draftLocation, body: Array(image[offset...]), headers: draftMarks.merging([
                "Content-Type": "application/partial-upload", "Upload-Offset": String(offset), "Upload-Complete": "?1"]) { $1 })
        }
        for panorama in [tusPanorama, draftPanorama] {
            let stored = try tenant.send("GET", "/v1/panoramas/\(panorama)")
            #expect(stored.status == 200 && stored.string("sha256") == sha256Hex(image), "\(panorama): \(stored.text)")
        }

        // A revoked grant ends its uploads: their URLs refuse at once.
        let revoked = try grant(tenant, propertyId, seconds: 3600)
        let second = try harness.client(revoked.token)
        let location = try #require(try second.tusCreate(panoramaId: newID(), floorId: floorId, length: 2000).header("Location"))
        #expect(try second.tusPatch(location, offset: 0, imageBytes(1000)).status == 204)
        #expect(try tenant.send("DELETE", "/v1/grants/\(revoked.id)").status == 204)
        let stopped = try second.tusPatch(location, offset: 1000, Array(imageBytes(2000)[1000...]))
        #expect(stopped.status == 401 && stopped.errorCode == "unauthorized", "\(stopped.text)")
        #expect(try harness.client(nil).tus("HEAD", location).status == 401)
        await harness.finish()
    }
}
