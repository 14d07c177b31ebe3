import Foundation
import Testing
import NTHTTPCore
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

/// docs/security.md "Who may call what": every `/v1` route of the router, with every kind of
/// credential, answers as the tables there say. The routes and their rules come from the router
/// (`SyncService.accessRules`, which a route cannot be added without), the expected answers from
/// the document: a route without a rule does not compile, a rule or route the document lacks
/// fails here, and so does any answer that differs.
@Suite(.hangGuard, .testThreads) struct AccessMatrixTests {
    /// The credentials tried, as the columns of the document's rule table.
    enum Caller: String, CaseIterable {
        case tenant = "Tenant token"
        case captureHere = "Capture grant on the property"
        case captureElsewhere = "Capture grant on another property"
        case readHere = "Read grant on the property"
        case expired = "Expired grant"
        case revoked = "Revoked grant"
        case uploadURL = "The upload's URL"
    }

    /// The ids a request's path is made of.
    struct Targets {
        var property = "", floor = "", panorama = "", tour = "", upload = "", capability = "", share = "", webhook = "", grant = "", token = ""

        func path(_ pattern: String) -> String {
            [("{propertyId}", property), ("{floorId}", floor), ("{panoramaId}", panorama), ("{tourId}", tour), ("{uploadId}", upload),
             ("{capability}", capability), ("{shareId}", share), ("{webhookId}", webhook), ("{grantId}", grant), ("{tokenId}", token)]
                .reduce(pattern) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
        }
    }

    private static let json = ["Content-Type": "application/json"]
    private static let tus = ["Tus-Resumable": "1.0.0"]

    /// A request each route accepts from a caller it lets in (2xx, or the handler's own 4xx for
    /// a body it checks: never 401, 403 or 404).
    private static func request(_ method: String, _ pattern: String, _ targets: Targets, image: [UInt8]) -> (path: String, body: [UInt8], headers: [String: String]) {
        var path = targets.path(pattern)
        switch (method, pattern) {
        case ("PUT", "/v1/properties/{propertyId}"):
            return (path, Array(#"{"name": "Villa", "floorCount": 2}"#.utf8), json)
        case ("PUT", "/v1/properties/{propertyId}/floors/{floorId}"):
            return (path, Array(#"{"number": 0}"#.utf8), json)
        case ("PUT", "/v1/floors/{floorId}/plan"):
            // Refused by the handler (400): a plan applied would replace the floor's world map, which others read.
            return (path, Array("{}".utf8), json)
        case ("PUT", "/v1/floors/{floorId}/worldmap"):
            return (path, [1, 2, 3], ["Content-Type": "application/octet-stream"])
        case ("PUT", "/v1/panoramas/{panoramaId}"):
            path = Targets(panorama: newID()).path(pattern) + "?floorId=\(targets.floor)"
            return (path, image, ["Content-Type": "image/jpeg"])
        case ("GET", "/v1/panoramas/{panoramaId}/preview"):
            return (path + "?width=320", [], [:])
        case ("POST", "/v1/tours/{tourId}/shares"):
            return (path, Array(#"{"expiresInSeconds": 3600}"#.utf8), json)
        case ("POST", "/v1/webhooks"):
            return (path, Array(#"{"url": "https://hooks.example.com/\#(newID())"}"#.utf8), json)
        case ("POST", "/v1/webhooks/{webhookId}/redeliver"):
            return (path, Array(#"{"after": "0"}"#.utf8), json)
        case ("PUT", "/v1/branding"):
            return (path, Array(#"{"name": "Harbour Homes"}"#.utf8), json)
        case ("PUT", "/v1/branding/logo"):
            return (path, image, ["Content-Type": "image/jpeg"])
        case ("POST", "/v1/grants"):
            return (path, Array(#"{"scopes": ["read"], "propertyIds": ["\#(targets.property)"], "expiresInSeconds": 3600}"#.utf8), json)
        case ("POST", "/v1/uploads"):
            let metadata = [("panoramaId", newID()), ("floorId", targets.floor), ("contentType", "image/jpeg")]
                .map { "\($0.0) \(Data($0.1.utf8).base64EncodedString())" }.joined(separator: ",")
            return (path, [], tus.merging(["Upload-Length": "1000", "Upload-Metadata": metadata]) { $1 })
        case ("PATCH", _):
            return (path, [], tus.merging(["Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"]) { $1 })
        case (_, _) where pattern.hasPrefix("/v1/uploads/"):
            return (path, [], tus)
        default:
            return (path, [], [:])
        }
    }

    /// docs/security.md's tables: each route's rule, and each rule's answer per caller.
    private static func documented() throws -> (routes: [String: String], answers: [String: [Caller: String]]) {
        let text = try String(contentsOfFile: ServiceHarness.root.appendingPathComponent("docs/security.md").path, encoding: .utf8)
        var routes: [String: String] = [:], answers: [String: [Caller: String]] = [:]
        var columns: [Caller] = []
        for line in text.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") }
            if cells.first == "Rule" { columns = cells.dropFirst().compactMap(Caller.init(rawValue:)); continue }
            guard cells.count >= 2, !cells[0].hasPrefix("-") else { continue }
            if cells.count == 2, cells[0].split(separator: " ").count == 2, cells[0].contains(" /v1/") {
                routes[cells[0]] = cells[1]
            } else if !columns.isEmpty, cells.count == columns.count + 1 {
                answers[cells[0]] = Dictionary(uniqueKeysWithValues: zip(columns, cells.dropFirst()))
                if answers.count == 7 { columns = [] }
            }
        }
        return (routes, answers)
    }

    @Test func everyRouteAnswersEachCredentialAsTheDocumentSays() async throws {
        // Each request that deletes gets things of its own: more webhooks than a tenant's default.
        let harness = try await ServiceHarness { $0.maxWebhooksPerTenant = 100 }
        _ = harness.service.makeRouter(metrics: ServerMetrics())
        let rules = harness.service.accessRules
        let (documentedRoutes, answers) = try Self.documented()
        let served = Dictionary(uniqueKeysWithValues: rules.map { ("\($0.method) \($0.pattern)", $0.access.name) })
        #expect(served == documentedRoutes, "docs/security.md's route table differs from the router's rules")
        #expect(Set(served.values).isSubset(of: answers.keys), "rules without a row: \(Set(served.values).subtracting(answers.keys))")
        #expect(answers.values.allSatisfy { $0.count == Caller.allCases.count })

        let tenant = try harness.client(harness.alpha)
        let image = try JPEGFixture.panorama(width: 256)
        // The property the grants are on, and another.
        let here = try Self.fill(tenant, image: image)
        let elsewhere = try Self.fill(tenant, image: image)
        func grant(_ scope: String, on property: String, seconds: Int = 3600) throws -> (id: String, token: String) {
            let made = try tenant.send("POST", "/v1/grants", json: ["scopes": [scope], "propertyIds": [property], "expiresInSeconds": seconds])
            #expect(made.status == 201, "\(made.text)")
            return (try #require(made.string("id")), try #require(made.string("token")))
        }
        let revoked = try grant("capture", on: here.property)
        #expect(try tenant.send("DELETE", "/v1/grants/\(revoked.id)").status == 204)
        let expired = try grant("capture", on: here.property, seconds: 60)
        harness.clock.moveOn(seconds: 61)
        let tokens: [Caller: String?] = [
            .tenant: harness.alpha, .captureHere: try grant("capture", on: here.property).token,
            .captureElsewhere: try grant("capture", on: elsewhere.property).token, .readHere: try grant("read", on: here.property).token,
            .expired: expired.token, .revoked: revoked.token, .uploadURL: nil,
        ]

        for rule in rules {
            let name = "\(rule.method) \(rule.pattern)"
            guard let row = answers[rule.access.name] else { continue }
            for caller in Caller.allCases {
                let expected = try #require(row[caller])
                var headers: [String: String] = [:]
                let token: String? = switch caller {
                case .uploadURL: rule.access == .uploadCapability ? nil : here.capability // a URL is not a token
                default: tokens[caller] ?? nil
                }
                // A request that may change what the others read works on things of its own.
                let targets = rule.method == "DELETE" && expected == "yes"
                    ? try Self.fill(tenant, image: image, in: rule.pattern == "/v1/properties/{propertyId}" ? nil : here) : here
                let (path, body, extra) = Self.request(rule.method, rule.pattern, targets, image: image)
                headers.merge(extra) { $1 }
                let client = try harness.client(token)
                let answer = try client.send(rule.method, path, body: body, headers: headers)
                let what = "\(name) with \(caller.rawValue): \(answer.status) \(answer.text)"
                switch expected {
                case "yes": #expect(![401, 403, 404].contains(answer.status), "\(what)")
                case "404": #expect(answer.status == 404 && (rule.method == "HEAD" || answer.errorCode == "not_found"), "\(what)")
                case "403": #expect(answer.status == 403 && (rule.method == "HEAD" || answer.errorCode == "forbidden"), "\(what)")
                case "401": #expect(answer.status == 401 && (rule.method == "HEAD" || answer.errorCode == "unauthorized"), "\(what)")
                case "401 grant_expired": #expect(answer.status == 401 && (rule.method == "HEAD" || answer.errorCode == "grant_expired"), "\(what)")
                default: Issue.record("docs/security.md: \(rule.access.name) answers \"\(expected)\" to \(caller.rawValue)")
                }
                if expected == "403", rule.method != "HEAD" {
                    let message = (answer.json?["error"] as? [String: Any])?["message"] as? String ?? ""
                    #expect(message.contains("tenant token") || message.contains("capture scope"), "a 403 names what is missing: \(what)")
                }
            }
        }
        // A capability that is not the upload's is no capability.
        let forged = here.path("/v1/uploads/{uploadId}/") + String(here.capability.dropLast(2)) + "AA"
        #expect(try harness.client(nil).send("HEAD", forged, headers: Self.tus).status == 404)
        await harness.finish()
    }

    /// A property with a floor, a world map, a panorama, an upload begun, a share, a webhook, a
    /// grant and a token; with `in`, the new things on that property instead.
    private static func fill(_ tenant: APIClient, image: [UInt8], in existing: Targets? = nil) throws -> Targets {
        var targets = existing ?? Targets(property: newID(), floor: newID())
        if existing == nil {
            #expect(try tenant.putProperty(targets.property).status == 201)
            #expect(try tenant.putFloor(targets.property, targets.floor).status == 201)
            // Rooms, for the floor plans to draw.
            #expect(try tenant.putPlan(targets.floor, mode: "newScan", rooms: [(newID(), "Kitchen")]).status == 200)
            #expect(try tenant.putWorldMap(targets.floor, bytes: [9, 9, 9]).status < 300)
            targets.tour = try #require(try tenant.send("GET", "/v1/properties/\(targets.property)").string("tourId"))
        }
        targets.panorama = newID()
        #expect(try tenant.putPanorama(targets.panorama, floorId: targets.floor, bytes: image).status == 201)
        let location = try #require(try tenant.tusCreate(panoramaId: newID(), floorId: targets.floor, length: 1000).header("Location"))
        let parts = location.split(separator: "/")
        (targets.upload, targets.capability) = (String(parts[2]), String(parts[3]))
        targets.share = try #require(try tenant.send("POST", "/v1/tours/\(targets.tour)/shares", json: ["expiresInSeconds": 3600]).string("id"))
        targets.webhook = try #require(try tenant.send("POST", "/v1/webhooks", json: ["url": "https://hooks.example.com/\(newID())"]).string("id"))
        targets.grant = try #require(try tenant.send("POST", "/v1/grants", json: ["scopes": ["read"], "propertyIds": [targets.property], "expiresInSeconds": 3600]).string("id"))
        targets.token = try #require(try tenant.send("POST", "/v1/tokens").string("id"))
        return targets
    }
}
