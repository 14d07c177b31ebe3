import Foundation
import Testing
import NTHTTPCore
import NTLogging
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

/// docs/api.md "Tenants are isolated": another tenant's ids answer 404 on every route, and
/// nothing of theirs changes. Table-driven over the router itself.
@Suite(.hangGuard, .testThreads) struct TenantIsolationTests {
    /// What tenant beta gets on each route when it names alpha's ids, with nothing of its own.
    /// Beta's PUT of a property id alpha uses makes beta's own property: ids are per tenant.
    private struct Case: Sendable {
        var status: Int
        var body: @Sendable (Fixture) -> (bytes: [UInt8], headers: [String: String]) = { _ in ([], [:]) }
        var query: @Sendable (Fixture) -> String = { _ in "" }
    }

    private struct Fixture: Sendable {
        var propertyId = newID(), floorId = newID(), roomId = newID(), panoramaId = newID()
        var tourId = "", uploadId = "", shareId = "", webhookId = "", grantId = "", tokenId = ""
        /// Alpha's upload capability, its tenant changed: the MAC is alpha's, so it names nothing.
        var capability = ""
    }

    private static let json = ["Content-Type": "application/json"]

    private static let cases: [String: Case] = [
        "GET /v1/properties": Case(status: 200),
        "GET /v1/events": Case(status: 200),
        "GET /v1/properties/{propertyId}": Case(status: 404),
        "DELETE /v1/properties/{propertyId}": Case(status: 404),
        "GET /v1/properties/{propertyId}/status": Case(status: 404),
        "GET /v1/tours/{tourId}": Case(status: 404),
        "PUT /v1/properties/{propertyId}/floors/{floorId}": Case(status: 404, body: { _ in (Array(#"{"number": 0}"#.utf8), json) }),
        "GET /v1/floors/{floorId}": Case(status: 404),
        "PUT /v1/floors/{floorId}/plan": Case(status: 404, body: { fixture in
            (Array(#"{"planId": "\#(newID())", "mode": "newScan", "rooms": [{"id": "\#(fixture.roomId)", "outline": [[0,0],[1,0],[1,1]]}]}"#.utf8), json)
        }),
        "GET /v1/floors/{floorId}/worldmap": Case(status: 404),
        "GET /v1/floors/{floorId}/floor-plan": Case(status: 404),
        "GET /v1/floors/{floorId}/floor-plan.svg": Case(status: 404),
        "GET /v1/floors/{floorId}/floor-plan.pdf": Case(status: 404),
        "GET /v1/floors/{floorId}/floor-plan.png": Case(status: 404),
        "GET /v1/properties/{propertyId}/floor-plan": Case(status: 404),
        "GET /v1/properties/{propertyId}/floor-plan.pdf": Case(status: 404),
        "PUT /v1/floors/{floorId}/panorama-order": Case(status: 404, body: { fixture in (Array(#"{"panoramaIds": ["\#(fixture.panoramaId)"]}"#.utf8), json) }),
        "PUT /v1/floors/{floorId}/worldmap": Case(status: 404, body: { _ in ([1, 2, 3], ["Content-Type": "application/octet-stream"]) }),
        "PUT /v1/panoramas/{panoramaId}": Case(status: 404, body: { _ in (imageBytes(100, seed: 3), ["Content-Type": "image/jpeg"]) },
                                               query: { "?floorId=\($0.floorId)" }),
        "GET /v1/panoramas/{panoramaId}": Case(status: 404),
        "GET /v1/panoramas/{panoramaId}/content": Case(status: 404),
        "GET /v1/panoramas/{panoramaId}/preview": Case(status: 404, query: { _ in "?width=320" }),
        "POST /v1/tours/{tourId}/shares": Case(status: 404, body: { _ in (Array(#"{"expiresInSeconds": 3600}"#.utf8), json) }),
        "GET /v1/tours/{tourId}/shares": Case(status: 404),
        "DELETE /v1/shares/{shareId}": Case(status: 404),
        "GET /v1/shares/{shareId}/stats": Case(status: 404),
        // The branding routes are the caller's own: beta's, never alpha's (which has a logo).
        "GET /v1/branding": Case(status: 200),
        "PUT /v1/branding": Case(status: 200, body: { _ in (Array(#"{"name": "Beta Homes"}"#.utf8), json) }),
        "PUT /v1/branding/logo": Case(status: 415, body: { _ in (Array("not an image".utf8), ["Content-Type": "image/png"]) }),
        "GET /v1/branding/logo": Case(status: 404),
        "DELETE /v1/branding/logo": Case(status: 204),
        "DELETE /v1/panoramas/{panoramaId}": Case(status: 404),
        "OPTIONS /v1/uploads": Case(status: 204), // no tenant data, but a token is required
        "OPTIONS /v1/panoramas/{panoramaId}": Case(status: 204), // the draft's limits: no tenant data
        "POST /v1/uploads": Case(status: 404, body: { fixture in
            ([], ["Tus-Resumable": "1.0.0", "Upload-Length": "10",
                  "Upload-Metadata": "panoramaId \(Data(newID().utf8).base64EncodedString()),floorId \(Data(fixture.floorId.utf8).base64EncodedString()),contentType \(Data("image/jpeg".utf8).base64EncodedString())"])
        }),
        "HEAD /v1/uploads/{uploadId}": Case(status: 404, body: { _ in ([], ["Tus-Resumable": "1.0.0"]) }),
        "PATCH /v1/uploads/{uploadId}": Case(status: 404, body: { _ in
            ([1, 2, 3], ["Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"])
        }),
        "DELETE /v1/uploads/{uploadId}": Case(status: 404, body: { _ in ([], ["Tus-Resumable": "1.0.0"]) }),
        "POST /v1/webhooks": Case(status: 201, body: { _ in (Array(#"{"url": "https://hooks.example.com/beta"}"#.utf8), json) }), // beta's own
        "GET /v1/webhooks": Case(status: 200),
        "POST /v1/grants": Case(status: 201, body: { _ in (Array(#"{"scopes": ["capture"], "expiresInSeconds": 3600}"#.utf8), json) }), // beta's own
        "GET /v1/grants": Case(status: 200),
        "DELETE /v1/grants/{grantId}": Case(status: 404),
        "POST /v1/tokens": Case(status: 201), // beta's own
        "GET /v1/tokens": Case(status: 200),
        "DELETE /v1/tokens/{tokenId}": Case(status: 404),
        "HEAD /v1/uploads/{uploadId}/{capability}": Case(status: 404, body: { _ in ([], ["Tus-Resumable": "1.0.0"]) }),
        "PATCH /v1/uploads/{uploadId}/{capability}": Case(status: 404, body: { _ in
            ([1, 2, 3], ["Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"])
        }),
        "DELETE /v1/uploads/{uploadId}/{capability}": Case(status: 404, body: { _ in ([], ["Tus-Resumable": "1.0.0"]) }),
        "GET /v1/webhooks/{webhookId}": Case(status: 404),
        "DELETE /v1/webhooks/{webhookId}": Case(status: 404),
        "GET /v1/webhooks/{webhookId}/deliveries": Case(status: 404),
        "POST /v1/webhooks/{webhookId}/redeliver": Case(status: 404, body: { _ in (Array(#"{"after": "0"}"#.utf8), json) }),
        // Last: beta's own property under the same id.
        "PUT /v1/properties/{propertyId}": Case(status: 201, body: { _ in (Array(#"{"name": "Beta's", "floorCount": 1}"#.utf8), json) }),
    ]
    /// Routes with no tenant data.
    private static let publicRoutes: Set<String> = ["GET /healthz", "GET /readyz", "GET /metrics"]
    /// The viewer's pages take no bearer token (ViewerAPITests holds their isolation cases).
    private static func isViewerRoute(_ pattern: String) -> Bool { pattern == "/app" || pattern.hasPrefix("/app/") || pattern.hasPrefix("/t/") }

    @Test func everyRouteHidesAnotherTenantsIds() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        var fixture = Fixture()
        try alpha.putProperty(fixture.propertyId, name: "Alpha's")
        try alpha.putFloor(fixture.propertyId, fixture.floorId)
        try alpha.putPlan(fixture.floorId, mode: "newScan", rooms: [(fixture.roomId, "Kitchen")])
        try alpha.putWorldMap(fixture.floorId, bytes: imageBytes(50))
        let image = imageBytes(500)
        try alpha.putPanorama(fixture.panoramaId, floorId: fixture.floorId, roomId: fixture.roomId, bytes: image)
        fixture.tourId = try #require(try alpha.send("GET", "/v1/properties/\(fixture.propertyId)").string("tourId"))
        let location = try #require(try alpha.tusCreate(panoramaId: newID(), floorId: fixture.floorId, length: 100).header("Location"))
        #expect(try alpha.tusPatch(location, offset: 0, imageBytes(40)).status == 204)
        fixture.uploadId = String(location.split(separator: "/").dropFirst(2).first ?? "")
        fixture.capability = "999999." + (location.split(separator: ".").last ?? "")
        fixture.grantId = try #require(try alpha.send("POST", "/v1/grants", json: ["scopes": ["read"], "propertyIds": [fixture.propertyId], "expiresInSeconds": 3600]).string("id"))
        fixture.tokenId = try #require(try alpha.send("POST", "/v1/tokens").string("id"))
        fixture.shareId = try #require(try alpha.send("POST", "/v1/tours/\(fixture.tourId)/shares", json: ["expiresInSeconds": 3600]).string("id"))
        fixture.webhookId = try #require(try alpha.send("POST", "/v1/webhooks", json: ["url": "https://hooks.example.com/alpha"]).string("id"))
        #expect(try alpha.send("PUT", "/v1/branding", json: ["name": "Alpha Homes"]).status == 200)
        #expect(try alpha.send("PUT", "/v1/branding/logo", body: try JPEGFixture.panorama(width: 256), headers: ["Content-Type": "image/jpeg"]).status == 200)
        let alphaFloor = try alpha.send("GET", "/v1/floors/\(fixture.floorId)").body

        let router = harness.service.makeRouter(metrics: ServerMetrics())
        let beta = try harness.client(harness.beta)
        var checked: Set<String> = []
        let routes = router.routes.sorted { ($0.pattern == "/v1/properties/{propertyId}" && $0.method == .put ? 1 : 0) < ($1.pattern == "/v1/properties/{propertyId}" && $1.method == .put ? 1 : 0) }
        for route in routes {
            let name = "\(route.method.name) \(route.pattern)"
            if Self.publicRoutes.contains(name) || Self.isViewerRoute(route.pattern) { continue }
            let testCase = try #require(Self.cases[name], "route \(name) has no tenant-isolation case: add one")
            let path = route.pattern
                .replacingOccurrences(of: "{propertyId}", with: fixture.propertyId)
                .replacingOccurrences(of: "{floorId}", with: fixture.floorId)
                .replacingOccurrences(of: "{panoramaId}", with: fixture.panoramaId)
                .replacingOccurrences(of: "{tourId}", with: fixture.tourId)
                .replacingOccurrences(of: "{uploadId}", with: fixture.uploadId)
                .replacingOccurrences(of: "{shareId}", with: fixture.shareId)
                .replacingOccurrences(of: "{webhookId}", with: fixture.webhookId)
                .replacingOccurrences(of: "{grantId}", with: fixture.grantId)
                .replacingOccurrences(of: "{tokenId}", with: fixture.tokenId)
                .replacingOccurrences(of: "{capability}", with: fixture.capability)
            let (body, headers) = testCase.body(fixture)
            let response = try beta.send(route.method.name, path + testCase.query(fixture), body: body, headers: headers)
            #expect(response.status == testCase.status, "\(name): \(response.status) \(response.text)")
            if testCase.status == 404 && route.method != .head { #expect(response.errorCode == "not_found", "\(name)") }
            if name == "GET /v1/properties" || name == "GET /v1/events" { #expect((response.json?["items"] as? [Any])?.isEmpty == true, "\(name)") }
            if name == "GET /v1/tokens" || name == "GET /v1/grants" {
                let alphas = name == "GET /v1/tokens" ? fixture.tokenId : fixture.grantId
                #expect(!((response.json?["items"] as? [[String: Any]]) ?? []).contains { $0["id"] as? String == alphas }, "\(name)")
            }
            if name == "GET /v1/webhooks" {
                #expect(!((response.json?["items"] as? [[String: Any]]) ?? []).contains { $0["id"] as? String == fixture.webhookId })
            }
            checked.insert(name)
        }
        #expect(checked == Set(Self.cases.keys))

        // Alpha's data is as it was.
        let property = try alpha.send("GET", "/v1/properties/\(fixture.propertyId)")
        #expect(property.string("name") == "Alpha's")
        #expect(property.string("tourId") == fixture.tourId)
        #expect(try alpha.send("GET", "/v1/floors/\(fixture.floorId)").body == alphaFloor)
        // Beta's branding and its logo's removal left alpha's.
        #expect(try alpha.send("GET", "/v1/branding").string("name") == "Alpha Homes" && alpha.send("GET", "/v1/branding/logo").status == 200)
        #expect(try alpha.send("GET", "/v1/panoramas/\(fixture.panoramaId)/content").body == image)
        #expect(try alpha.tus("HEAD", location).header("Upload-Offset") == "40")
        #expect(try alpha.send("GET", "/v1/webhooks/\(fixture.webhookId)").status == 200)
        // And beta's property under the same id is beta's own, with its own tour.
        let betas = try beta.send("GET", "/v1/properties/\(fixture.propertyId)")
        #expect(betas.string("name") == "Beta's")
        #expect(betas.string("tourId") != fixture.tourId)
        await harness.finish()
    }
}
