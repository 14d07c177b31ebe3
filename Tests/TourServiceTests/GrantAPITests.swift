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

/// docs/api.md "Grants and tokens": what a grant is made with, its limits, its events, a
/// capture grant's own properties, tenant tokens over HTTP, and the sweep of expired grants.
@Suite(.hangGuard, .testThreads) struct GrantAPITests {
    @Test func grantsAreCheckedCappedListedAndTheirEventsAreInTheFeed() async throws {
        let harness = try await ServiceHarness { $0.grantsPerTenant = 3 }
        let tenant = try harness.client(harness.alpha)
        let (propertyId, _) = try tenant.makeFloor()
        for (body, reason) in [
            (["scopes": ["capture"], "expiresInSeconds": 59] as [String: Any], "expiresInSeconds must be 60 to 604800"),
            (["scopes": ["capture"], "expiresInSeconds": 604_801], "expiresInSeconds must be 60 to 604800"),
            (["scopes": ["read"], "expiresInSeconds": 600], "a read grant names its propertyIds"),
            (["scopes": ["delete"], "expiresInSeconds": 600], "scopes holds"),
            (["scopes": [], "expiresInSeconds": 600], "scopes names at least one"),
            (["scopes": ["capture"], "propertyIds": ["not-a-uuid"], "expiresInSeconds": 600], "propertyIds must be a lowercase UUID"),
        ] {
            let refused = try tenant.send("POST", "/v1/grants", json: body)
            #expect(refused.status == 400 && refused.text.contains(reason), "\(body): \(refused.text)")
        }
        var made: [String] = []
        for _ in 0..<3 {
            let grant = try tenant.send("POST", "/v1/grants", json: ["scopes": ["read", "capture", "read"], "propertyIds": [propertyId, propertyId], "expiresInSeconds": 600])
            #expect(grant.status == 201 && grant.string("token")?.hasPrefix("ntg_") == true)
            #expect(grant.json?["scopes"] as? [String] == ["capture", "read"] && grant.json?["propertyIds"] as? [String] == [propertyId])
            made.append(try #require(grant.string("id")))
        }
        let capped = try tenant.send("POST", "/v1/grants", json: ["scopes": ["capture"], "expiresInSeconds": 600])
        #expect(capped.status == 409 && capped.text.contains("grantsPerTenant"))
        // Listed without tokens; a revoked one stays listed, with revokedAt, and frees its place.
        #expect(try tenant.send("DELETE", "/v1/grants/\(made[0])").status == 204)
        #expect(try tenant.send("DELETE", "/v1/grants/\(made[0])").status == 404)
        let page = try tenant.send("GET", "/v1/grants?limit=2")
        let items = try #require(page.json?["items"] as? [[String: Any]])
        #expect(items.count == 2 && items.allSatisfy { $0["token"] == nil } && page.string("next") == items.last?["id"] as? String)
        let next = try #require(page.string("next"))
        let rest = try #require(try tenant.send("GET", "/v1/grants?after=\(next)").json?["items"] as? [[String: Any]])
        #expect(Set((items + rest).compactMap { $0["id"] as? String }) == Set(made))
        #expect((items + rest).filter { $0["revokedAt"] is String }.compactMap { $0["id"] as? String } == [made[0]])
        #expect(try tenant.send("POST", "/v1/grants", json: ["scopes": ["capture"], "expiresInSeconds": 600]).status == 201)

        let events = try EventFeedTests.feed(tenant).filter { ($0["type"] as? String)?.hasPrefix("grant.") == true }
        #expect(events.map { $0["type"] as? String } == ["grant.created", "grant.created", "grant.created", "grant.revoked", "grant.created"])
        let created = try #require(events.first?["data"] as? [String: Any])
        #expect(created["grantId"] as? String == made[0] && created["propertyIds"] as? [String] == [propertyId] && created["token"] == nil)
        #expect((events[3]["data"] as? [String: Any])?["grantId"] as? String == made[0] && events[3]["propertyId"] as? String == "")
        await harness.finish()
    }

    @Test func aCaptureGrantWorksOnThePropertiesItCreatesAndSeesOnlyItsOwn() async throws {
        let harness = try await ServiceHarness()
        let tenant = try harness.client(harness.alpha)
        let (theirs, _) = try tenant.makeFloor()
        let grant = try tenant.send("POST", "/v1/grants", json: ["scopes": ["capture"], "expiresInSeconds": 600])
        let token: String = try #require(grant.string("token"))
        let phone = try harness.client(token)
        let (mine, floorId) = try phone.makeFloor()
        #expect(try phone.putPanorama(newID(), floorId: floorId, bytes: try JPEGFixture.panorama(width: 256)).status == 201)
        let listed = try #require(try phone.send("GET", "/v1/properties").json?["items"] as? [[String: Any]])
        #expect(listed.compactMap { $0["id"] as? String } == [mine])
        #expect(try #require(try phone.send("GET", "/v1/grants").errorCode) == "forbidden")
        // A property that exists and is not the grant's is not its to change, even by PUT.
        let taken = try phone.send("PUT", "/v1/properties/\(theirs)", json: ["name": "Mine now", "floorCount": 1])
        #expect(taken.status == 404 && taken.errorCode == "not_found")
        #expect(try tenant.send("GET", "/v1/properties/\(theirs)").string("name") == "Villa")
        #expect(try #require(try tenant.send("GET", "/v1/grants").json?["items"] as? [[String: Any]]).first?["propertyIds"] as? [String] == [mine])
        await harness.finish()
    }

    @Test func anUploadsURLIsNeverLogged() async throws {
        let logFile = testDirectory("capability-log").path
        defer { try? FileManager.default.removeItem(atPath: logFile) }
        // One daemon: the access log is its own.
        let harness = try await ServiceHarness(logFile: logFile, logLevel: .info, alone: true)
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 100).header("Location"))
        #expect(try harness.client(nil).tus("HEAD", location).status == 200)
        await harness.stop()
        let log = try String(contentsOfFile: logFile, encoding: .utf8)
        let capability = try #require(location.split(separator: "/").last.map(String.init))
        #expect(!log.contains(capability) && log.contains("path=/v1/uploads/{uploadId}/{capability}"))
        await harness.finish()
    }

    @Test func tenantTokensAreMadeListedAndRevokedOverHTTPButNeverTheLast() async throws {
        let harness = try await ServiceHarness { $0.tokensPerTenant = 3 }
        let tenant = try harness.client(harness.alpha)
        let made = try tenant.send("POST", "/v1/tokens")
        #expect(made.status == 201 && made.string("token")?.hasPrefix("nt_") == true)
        let token: String = try #require(made.string("token"))
        let fresh = try harness.client(token)
        #expect(try fresh.send("GET", "/v1/properties").status == 200)
        #expect(try tenant.send("POST", "/v1/tokens").status == 201)
        #expect(try tenant.send("POST", "/v1/tokens").status == 409) // alpha's first, and two
        let listed = try #require(try tenant.send("GET", "/v1/tokens").json?["items"] as? [[String: Any]])
        #expect(listed.count == 3 && listed.allSatisfy { $0["token"] == nil })
        let ids = listed.compactMap { $0["id"] as? String }
        #expect(try tenant.send("GET", "/v1/tokens?after=x").status == 400)
        // The new token revokes the others, its own maker's too; then it is the last.
        for id in ids where id != made.string("id") { #expect(try fresh.send("DELETE", "/v1/tokens/\(id)").status == 204) }
        #expect(try tenant.send("GET", "/v1/properties").status == 401)
        let madeId = try #require(made.string("id"))
        let last = try fresh.send("DELETE", "/v1/tokens/\(madeId)")
        #expect(last.status == 409 && last.text.contains("last"))
        #expect(try fresh.send("DELETE", "/v1/tokens/999999").status == 404)
        await harness.finish()
    }

    @Test func expiredGrantsGoWithTheSweepUnlessAnUploadNamesThem() async throws {
        // The upload outlives the days the clock moves on.
        let harness = try await ServiceHarness { $0.uploadExpirySeconds = 60 * 86_400 }
        let tenant = try harness.client(harness.alpha)
        let (propertyId, floorId) = try tenant.makeFloor()
        func grant() throws -> (id: String, token: String) {
            let made = try tenant.send("POST", "/v1/grants", json: ["scopes": ["capture"], "propertyIds": [propertyId], "expiresInSeconds": 60])
            return (try #require(made.string("id")), try #require(made.string("token")))
        }
        let (idle, uploading) = (try grant(), try grant())
        let location = try #require(try harness.client(uploading.token).tusCreate(panoramaId: newID(), floorId: floorId, length: 1000).header("Location"))
        #expect(try tenant.send("DELETE", "/v1/grants/\(uploading.id)").status == 204)
        // Expired, but kept grantKeepDays: its token still says to ask for a fresh one.
        harness.clock.moveOn(seconds: 61)
        await harness.service.sweeps.removeExpiredGrants()
        #expect(try harness.client(idle.token).send("GET", "/v1/properties").errorCode == "grant_expired")
        harness.clock.moveOn(seconds: Int64(harness.config.grantKeepDays) * 86_400)
        await harness.service.sweeps.removeExpiredGrants()
        #expect(try harness.client(idle.token).send("GET", "/v1/properties").errorCode == "unauthorized")
        let left = try await harness.service.records.read { try await $0.query("SELECT id FROM grants ORDER BY id").map { try $0.decode(0, as: String.self) } }
        #expect(left == [uploading.id] && !left.contains(idle.id))
        // The revoked grant's row stays, so its upload's URL stays refused.
        #expect(try harness.client(nil).tus("HEAD", location).status == 401)
        await harness.finish()
    }
}
