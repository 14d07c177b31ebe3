import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport
import TestTraits
import NTAPIModel
@testable import NTTourUseCases

/// docs/api.md "Floor plans": a floor's plan as SVG, PDF and PNG and the home's as a PDF,
/// measured in the agency's units, branded or not, offered by a share link that says so.
@Suite(.hangGuard, .testThreads) struct PublishedFloorPlanTests {
    /// The browser test's house: its rooms, their outlines, and their areas in square metres.
    static let house: [(floor: String, rooms: [(name: String, outline: [[Double]], area: Double, size: String)])] = [
        ("Ground floor", [("Hall", [[0, 0], [3, 0], [3, 4], [0, 4]], 12, "3.0 × 4.0 m"),
                          ("Living room", [[3, 0], [9, 0], [9, 3], [6, 3], [6, 6], [3, 6]], 27, "max 6.0 × 6.0 m"),
                          ("Kitchen", [[6, 3], [9, 3], [9, 6], [6, 6]], 9, "3.0 × 3.0 m")]),
        ("First floor", [("Landing", [[0, 0], [3, 0], [3, 4], [0, 4]], 12, "3.0 × 4.0 m"),
                         ("Bedroom", [[3, 0], [8, 0], [8, 4], [3, 4]], 20, "5.0 × 4.0 m")]),
    ]
    static var agency: [String: Any] { ["name": "Harbour Homes", "contact": ["023 9200 0000", "hello@harbour.example"], "floorNames": "uk"] }

    /// The house on the server, its agency's branding and logo set: (property, floors).
    static func build(_ client: APIClient) throws -> (propertyId: String, floorIds: [String]) {
        let propertyId = newID()
        #expect(try client.putProperty(propertyId, name: "Dune House").status == 201)
        var floorIds: [String] = []
        for (number, floor) in house.enumerated() {
            let floorId = newID()
            #expect(try client.putFloor(propertyId, floorId, number: number).status == 201)
            let rooms: [[String: Any]] = floor.rooms.map { ["id": newID(), "name": $0.name, "outline": $0.outline, "height": 2.5] }
            #expect(try client.send("PUT", "/v1/floors/\(floorId)/plan", json: ["planId": newID(), "mode": "newScan", "rooms": rooms]).status == 200)
            floorIds.append(floorId)
        }
        #expect(try client.send("PUT", "/v1/branding", json: agency).status == 200)
        let logo = PNGFixture.withAlpha(width: 300, height: 100) { x, _ in x < 150 ? (20, 60, 110, 255) : (200, 160, 40, 255) }
        #expect(try client.send("PUT", "/v1/branding/logo", body: logo, headers: ["Content-Type": "image/png"]).status == 200)
        return (propertyId, floorIds)
    }

    /// Runs a poppler tool on `bytes` written to a file; its standard output.
    static func poppler(_ tool: String, _ bytes: [UInt8], _ arguments: [String] = []) throws -> (status: Int32, out: String, folder: String) {
        let folder = testDirectory("floor-plan-\(tool)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/plan.pdf"))
        let run = try runCommand("/usr/bin/" + tool, arguments + [folder + "/plan.pdf"] + (tool == "pdftotext" ? ["-"] : [folder + "/page"]), timeoutSeconds: 60)
        return (run.status, run.out, folder)
    }

    @Test func aFloorsSVGNamesEveryRoomWithItsAreaAndTheFloorsTotal() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorIds) = try Self.build(client)
        for (index, floorId) in floorIds.enumerated() {
            let svg = try client.send("GET", "/v1/floors/\(floorId)/floor-plan.svg")
            #expect(svg.status == 200 && svg.header("content-type") == "image/svg+xml")
            #expect(svg.header("content-disposition")?.contains("dune-house-") == true)
            let texts = try SVGTexts(svg.body)
            let expected = Self.house[index]
            for room in expected.rooms {
                #expect(texts.rooms.contains(room.name), "\(room.name) is a room of the drawing: \(texts.rooms)")
                let area = try #require(texts.area(after: room.name), "\(room.name)'s area")
                #expect(abs(area - room.area) <= room.area * 0.01, "\(room.name): \(area) m², drawn; \(room.area) enclosed")
                #expect(texts.all.contains { $0.hasPrefix(room.size) }, "\(room.name) is \(room.size)")
            }
            let total = expected.rooms.reduce(0) { $0 + $1.area }
            let said = try #require(texts.all.first { $0.hasPrefix("Floor area: ") })
            #expect(abs(SVGTexts.squareMetres(said)! - total) <= total * 0.01, "\(said)")
            // The agency's units (metric, a UK agency) with feet in brackets; its name on a branded plan.
            #expect(said.contains("(") && said.contains("ft²") && texts.all.contains("Harbour Homes"))
        }
        // Asked by Accept: a PDF, a PNG; what it cannot serve is 406.
        #expect(try client.send("GET", "/v1/floors/\(floorIds[0])/floor-plan", headers: ["Accept": "application/pdf"]).header("content-type") == "application/pdf")
        #expect(try client.send("GET", "/v1/floors/\(floorIds[0])/floor-plan", headers: ["Accept": "text/html, image/png;q=0.9"]).header("content-type") == "image/png")
        #expect(try client.send("GET", "/v1/floors/\(floorIds[0])/floor-plan", headers: ["Accept": "*/*"]).header("content-type") == "image/svg+xml")
        let refused = try client.send("GET", "/v1/floors/\(floorIds[0])/floor-plan", headers: ["Accept": "text/html"])
        #expect(refused.status == 406 && refused.errorCode == "not_acceptable")
        #expect(try client.send("GET", "/v1/properties/\(newID())/floor-plan.pdf").status == 404)
        // A home's plan is a PDF alone; a floor without rooms (no plan yet) has none.
        let (propertyId, _) = try client.makeFloor()
        #expect(try client.send("GET", "/v1/properties/\(propertyId)/floor-plan", headers: ["Accept": "image/svg+xml"]).errorCode == "not_acceptable")
        let planless = try client.send("GET", "/v1/properties/\(propertyId)/floor-plan.pdf")
        #expect(planless.status == 404 && planless.text.contains("no floor plan yet"))
        await harness.finish()
    }

    @Test func theHomesPDFSaysEveryRoomItsSizeAndAreaOnAPageEachAndTheUnbrandedOneNothingOfTheAgency() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, _) = try Self.build(client)
        let pdf = try client.send("GET", "/v1/properties/\(propertyId)/floor-plan.pdf")
        #expect(pdf.status == 200 && pdf.header("content-type") == "application/pdf" && pdf.body.starts(with: Array("%PDF".utf8)))
        let text = try Self.poppler("pdftotext", pdf.body)
        #expect(text.status == 0)
        for floor in Self.house {
            for room in floor.rooms {
                #expect(text.out.contains(room.name) && text.out.contains(room.size), "\(room.name) \(room.size) in the PDF")
                #expect(text.out.contains(Self.metric(room.area)), "\(room.name)'s \(Self.metric(room.area))")
            }
        }
        #expect(text.out.contains("Total floor area") && text.out.contains("80.0 m²") && text.out.contains("Harbour Homes") && text.out.contains("023 9200 0000"))
        // A cover and a page per floor, each rendered.
        let pages = try Self.poppler("pdftoppm", pdf.body, ["-r", "30", "-png"])
        #expect(pages.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: pages.folder).filter { $0.hasPrefix("page") && $0.hasSuffix(".png") }.count == 3)

        let unbranded = try client.send("GET", "/v1/properties/\(propertyId)/floor-plan.pdf?branding=unbranded")
        let plain = try Self.poppler("pdftotext", unbranded.body).out
        #expect(plain.contains("Living room") && plain.contains("27.0 m²"))
        for word in ["Harbour", "023 9200", "harbour.example", "NoughtyTours"] {
            #expect(!plain.contains(word) && !String(decoding: unbranded.body, as: UTF8.self).contains(word), "\(word) in the unbranded PDF")
        }
        #expect(unbranded.header("etag") != pdf.header("etag"))
        await harness.finish()
    }

    /// A plan is drawn once per what it shows: asked again it is a 304; a renamed room, or a
    /// changed branding, is drawn anew.
    @Test func aPlanIsKeptUntilItsPlanOrBrandingChanges() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorIds) = try Self.build(client)
        let first = try client.send("GET", "/v1/floors/\(floorIds[1])/floor-plan.png?width=800")
        #expect(first.status == 200 && first.header("content-type") == "image/png")
        #expect(PNGFixture.size(first.body).map { $0.width } == 800)
        let tag = try #require(first.header("etag"))
        #expect(try client.send("GET", "/v1/floors/\(floorIds[1])/floor-plan.png?width=800", headers: ["If-None-Match": tag]).status == 304)
        let rooms: [[String: Any]] = [["id": newID(), "name": "Study", "outline": [[0, 0], [3, 0], [3, 3], [0, 3]]]]
        #expect(try client.send("PUT", "/v1/floors/\(floorIds[1])/plan", json: ["planId": newID(), "mode": "newScan", "rooms": rooms]).status == 200)
        let replanned = try client.send("GET", "/v1/floors/\(floorIds[1])/floor-plan.svg", headers: ["If-None-Match": tag])
        #expect(replanned.status == 200 && String(decoding: replanned.body, as: UTF8.self).contains("Study"))
        let svgTag = try #require(replanned.header("etag"))
        #expect(try client.send("PUT", "/v1/branding", json: ["name": "Harbour Homes Ltd", "floorNames": "us"]).status == 200)
        let rebranded = try client.send("GET", "/v1/floors/\(floorIds[1])/floor-plan.svg", headers: ["If-None-Match": svgTag])
        let body = String(decoding: rebranded.body, as: UTF8.self)
        #expect(rebranded.status == 200 && body.contains("Harbour Homes Ltd") && body.contains("97 ft²") && !body.contains("m²"))
        // A width out of bounds, a width of an SVG, another branding: 400, saying which.
        #expect(try client.send("GET", "/v1/floors/\(floorIds[1])/floor-plan.png?width=100000").errorCode == "bad_request")
        #expect(try client.send("GET", "/v1/floors/\(floorIds[1])/floor-plan.svg?width=800").errorCode == "bad_request")
        #expect(try client.send("GET", "/v1/floors/\(floorIds[1])/floor-plan.pdf?branding=plain").errorCode == "bad_request")
        await harness.finish()
    }

    /// Ids are the tenant's own: another tenant that names its property and floor alike (and
    /// its property the same) gets a plan of its own rooms, never one drawn for the first.
    @Test func anotherTenantsPlanUnderTheSameIdsIsItsOwn() async throws {
        let harness = try await ServiceHarness()
        let (propertyId, floorId) = (newID(), newID())
        for (token, room) in [(harness.alpha, "Alpha's kitchen"), (harness.beta, "Beta's kitchen")] {
            let client = try harness.client(token)
            #expect(try client.putProperty(propertyId, name: "Twin House").status == 201)
            #expect(try client.putFloor(propertyId, floorId).status == 201)
            let rooms: [[String: Any]] = [["id": newID(), "name": room, "outline": [[0, 0], [4, 0], [4, 3], [0, 3]]]]
            #expect(try client.send("PUT", "/v1/floors/\(floorId)/plan", json: ["planId": newID(), "mode": "newScan", "rooms": rooms]).status == 200)
        }
        let alpha = String(decoding: try harness.client(harness.alpha).send("GET", "/v1/floors/\(floorId)/floor-plan.svg").body, as: UTF8.self)
        let beta = String(decoding: try harness.client(harness.beta).send("GET", "/v1/floors/\(floorId)/floor-plan.svg").body, as: UTF8.self)
        #expect(alpha.contains("Alpha&#39;s kitchen") && !alpha.contains("Beta"))
        #expect(beta.contains("Beta&#39;s kitchen") && !beta.contains("Alpha"))
        await harness.finish()
    }

    /// A share link made with floor plans offered serves the home's PDF without a token,
    /// branded as the link is; one without is 403; a revoked one serves nothing.
    @Test func aShareLinkOfferingPlansServesThePDFUntilItIsRevoked() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, _) = try Self.build(client)
        let tourId = try #require(try client.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let offering = try client.send("POST", "/v1/tours/\(tourId)/shares", json: ["offersFloorPlans": true, "branding": "unbranded"])
        #expect(offering.status == 201 && offering.json?["offersFloorPlans"] as? Bool == true)
        let url = try #require(offering.string("url"))
        let visitor = try harness.client(nil)
        let pdf = try visitor.send("GET", url + "/floor-plan.pdf")
        #expect(pdf.status == 200 && pdf.header("content-type") == "application/pdf")
        let text = try Self.poppler("pdftotext", pdf.body).out
        #expect(text.contains("Bedroom") && !text.contains("Harbour"), "an unbranded link's plan names no agency")
        #expect(String(decoding: try visitor.send("GET", url).body, as: UTF8.self).contains("Download the floor plan"))

        let plain = try #require(try client.send("POST", "/v1/tours/\(tourId)/shares", json: [:]).string("url"))
        #expect(try visitor.send("GET", plain + "/floor-plan.pdf").status == 403)
        #expect(!String(decoding: try visitor.send("GET", plain).body, as: UTF8.self).contains("Download the floor plan"))

        #expect(try client.send("DELETE", "/v1/shares/\(try #require(offering.string("id")))").status == 204)
        #expect(try visitor.send("GET", url + "/floor-plan.pdf").status == 404)
        await harness.finish()
    }

    /// North on the plan: where a panorama's heading on the plan and its file's compass heading
    /// are both known, the first less the second; their circular mean over several; none else.
    @Test func northIsWhereThePanoramasHeadingsTellIt() throws {
        func panorama(plan: Double?, compass: Double?) throws -> PanoramaDocument {
            PanoramaDocument(id: newID(), propertyId: "p", floorId: "f", roomId: nil, contentType: "image/jpeg", size: 1, sha256: "ab",
                             createdAt: "2026-12-06T00:00:00.000Z", position: try PanoramaPosition(x: 1, y: 1, heading: plan),
                             fileGeometry: compass.map { PanoramaFileGeometry(heading: $0) })
        }
        #expect(FloorPlans.north([try panorama(plan: 90, compass: 60)]).map { abs($0 - 30) < 1e-9 } == true)
        let around = try #require(FloorPlans.north([try panorama(plan: 10, compass: 0), try panorama(plan: 350, compass: 0)]))
        #expect(abs(around) < 1e-9 || abs(around - 360) < 1e-9, "the mean of 10° and 350° is 0°, not 180°: \(around)")
        #expect(FloorPlans.north([try panorama(plan: 90, compass: nil), try panorama(plan: nil, compass: 60)]) == nil)
    }

    /// Drawn plans are kept up to `floorPlanCacheBytes`, the least recently asked for going
    /// first; one larger than the whole is not kept.
    @Test func theLeastRecentlyAskedPlanGoesFirst() {
        let cache = FloorPlanCache(limit: 10)
        cache.keep([1, 1, 1, 1], as: "a")
        cache.keep([2, 2, 2, 2], as: "b")
        #expect(cache.bytes("a") == [1, 1, 1, 1]) // a asked again: b is now the oldest
        cache.keep([3, 3, 3, 3], as: "c")
        #expect(cache.bytes("b") == nil && cache.bytes("a") != nil && cache.bytes("c") != nil && cache.held == 8)
        cache.keep(Array(repeating: 4, count: 11), as: "d")
        #expect(cache.bytes("d") == nil && cache.held == 8)
    }

    /// A PNG's pixels are taken from `imageMemoryBytes` before it is drawn: one the budget
    /// could never hold is refused with the limit named, and the daemon goes on.
    @Test func aPNGLargerThanTheImageBudgetIsRefusedSayingWhy() async throws {
        let harness = try await ServiceHarness { $0.imageMemoryBytes = 16 << 20 }
        let client = try harness.client(harness.alpha)
        let (_, floorIds) = try Self.build(client)
        let refused = try client.send("GET", "/v1/floors/\(floorIds[0])/floor-plan.png?width=4096")
        #expect(refused.status == 500 && refused.text.contains("imageMemoryBytes"), "\(refused.status) \(refused.text)")
        #expect(try client.send("GET", "/v1/floors/\(floorIds[0])/floor-plan.png?width=1000").status == 200)
        await harness.finish()
    }

    static func metric(_ area: Double) -> String {
        String(format: "%.1f m²", area)
    }
}

/// The text of an SVG floor plan, read as XML: each room's group's name, and every line.
struct SVGTexts {
    var rooms: [String] = []
    var all: [String] = []

    init(_ bytes: [UInt8]) throws {
        let parser = XMLParser(data: Data(bytes))
        let reader = Reader()
        parser.delegate = reader
        guard parser.parse() else { throw parser.parserError ?? CocoaError(.coderReadCorrupt) }
        rooms = reader.rooms
        all = reader.texts
    }

    /// The area in square metres on the line two after a room's name (its size, then its area).
    func area(after name: String) -> Double? {
        guard let index = all.firstIndex(of: name), index + 2 < all.count else { return nil }
        return Self.squareMetres(all[index + 2])
    }

    /// "27.0 m² (291 ft²)" → 27.
    static func squareMetres(_ text: String) -> Double? {
        guard let range = text.range(of: " m²") else { return nil }
        return Double(text[..<range.lowerBound].split(separator: " ").last ?? "")
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var rooms: [String] = []
        var texts: [String] = []
        private var open: String?
        private var inRoom = false
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            if name == "g", attributes["class"] == "room" { inRoom = true }
            open = name
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "title", inRoom { rooms.append(text) }
            if name == "text" { texts.append(text) }
            if name == "g" { inRoom = false }
            text = ""
        }
    }
}
