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

/// A tenant's branding on its share links (docs/api.md "Branding"): set over the API, checked
/// (the accent's contrast, the logo as a panorama is), shown on a branded link's pages and on
/// none of an unbranded one's; floors named as the tenant names them.
@Suite(.hangGuard, .testThreads) struct BrandingTests {
    private static var branding: [String: Any] { ["name": "Harbour Homes", "accent": "#0B5D3B", "contact": ["Jane Agent", "+44 20 7946 0000"], "floorNames": "us"] }

    @Test func brandingIsSetOverTheAPIAndCheckedForContrast() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        let none = try alpha.send("GET", "/v1/branding")
        #expect(none.status == 200 && none.json?["name"] is NSNull && none.string("floorNames") == "uk" && none.json?["logo"] is NSNull)
        let set = try alpha.send("PUT", "/v1/branding", json: Self.branding)
        #expect(set.status == 200, "\(set.text)")
        #expect(set.string("name") == "Harbour Homes" && set.string("accent") == "#0b5d3b" && set.string("floorNames") == "us")
        #expect(set.json?["contact"] as? [String] == ["Jane Agent", "+44 20 7946 0000"] && set.string("updatedAt") != nil)
        // Yellow on white reads at 1.0:1: refused, saying its ratio and what is needed.
        for (body, message) in [(["accent": "#ffdd00"] as [String: Any], "has a contrast of 1.3:1 against white; at least 4.5:1"),
                                (["accent": "#777777"], "has a contrast of 4.4:1"), (["accent": "green"], "accent must be a colour as #rrggbb"),
                                (["accent": "#12345g"], "#rrggbb"), (["contact": ["a", "b", "c", "d", "e"]], "at most 4 lines"),
                                (["contact": ["line\u{7}"]], "must not contain control"), (["floorNames": "fr"], "floorNames must be"),
                                (["name": ""], "name must be 1 to 200")] {
            let refused = try alpha.send("PUT", "/v1/branding", json: body)
            #expect(refused.status == 400 && refused.text.contains(message), "\(body): \(refused.text)")
        }
        // A refusal changes nothing; another tenant has its own (none).
        #expect(try alpha.send("GET", "/v1/branding").string("accent") == "#0b5d3b")
        #expect(try harness.client(harness.beta).send("GET", "/v1/branding").json?["name"] is NSNull)
        await harness.finish()
    }

    /// The logo is checked as a panorama is (its type, its signature, the decode budget) and
    /// made again from its pixels: a JPEG at most `logoWidth` wide, without the file's metadata.
    @Test func aLogoIsMadeAgainFromItsPixelsWithinTheImageBudget() async throws {
        let harness = try await ServiceHarness { $0.logoWidth = 240; $0.maxLogoBytes = 64 << 10 }
        let alpha = try harness.client(harness.alpha)
        let png = PNGFixture.tagged(PNGFixture.withAlpha(width: 600, height: 200) { x, _ in x < 300 ? (11, 93, 59, 255) : (0, 0, 0, 0) },
                                    xmp: "<x:xmpmeta><rdf:Description xmp:CreatorTool=\"Secret Studio 9\"/></x:xmpmeta>")
        let set = try alpha.send("PUT", "/v1/branding/logo", body: png, headers: ["Content-Type": "image/png"])
        #expect(set.status == 200, "\(set.text)")
        #expect((set.json?["logo"] as? [String: Any]).map { [$0["width"] as? Int, $0["height"] as? Int] } == [240, 80])
        let logo = try alpha.send("GET", "/v1/branding/logo")
        #expect(logo.status == 200 && logo.header("Content-Type") == "image/jpeg" && JPEGFixture.dimensions(logo.body) == [240, 80])
        #expect(!String(decoding: logo.body, as: UTF8.self).contains("Secret Studio"))
        let etag = try #require(logo.header("ETag"))
        #expect(try alpha.send("GET", "/v1/branding/logo", headers: ["If-None-Match": etag]).status == 304)

        for (type, bytes, status) in [("text/plain", png, 415), ("image/jpeg", png, 415), ("image/png", PNGFixture.claiming(width: 60_000, height: 30_000), 400)] {
            let refused = try alpha.send("PUT", "/v1/branding/logo", body: bytes, headers: ["Content-Type": type])
            #expect(refused.status == status, "\(type): \(refused.text)")
        }
        // Past maxLogoBytes: refused from the head (a client that waits for 100 Continue sends
        // no byte of it; one that sends the body anyway may lose the answer to the close).
        // (To a daemon itself: a balancer in front answers 100 Continue on its own.)
        let large = try RawClient(port: harness.daemonPorts[0])
        try large.send("PUT /v1/branding/logo HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.alpha)\r\nContent-Type: image/png\r\n"
                       + "Content-Length: \((64 << 10) + 1)\r\nExpect: 100-continue\r\n\r\n")
        #expect(try large.readResponse().status == 413)
        // A refused logo leaves the one set.
        #expect(try alpha.send("GET", "/v1/branding/logo").body == logo.body)
        #expect(try alpha.send("DELETE", "/v1/branding/logo").status == 204)
        #expect(try alpha.send("GET", "/v1/branding/logo").status == 404)
        #expect(try alpha.send("GET", "/v1/branding").json?["logo"] is NSNull)
        await harness.finish()
    }

    /// A branded link carries the tenant's name, logo, accent and contact; an unbranded link of
    /// the same tour none of them, nor the platform's name, in its pages, titles or images.
    @Test func aBrandedLinkShowsTheBrandAndAnUnbrandedOneNothingOfItOrThePlatform() async throws {
        let harness = try await ServiceHarness { $0.publicPlatformName = "TourHost"; $0.viewerSubtitle = "Tours by TourHost" }
        let alpha = try harness.client(harness.alpha)
        #expect(try alpha.send("PUT", "/v1/branding", json: Self.branding).status == 200)
        let png = PNGFixture.make(width: 300, height: 100) { _, _ in (11, 93, 59) }
        #expect(try alpha.send("PUT", "/v1/branding/logo", body: png, headers: ["Content-Type": "image/png"]).status == 200)
        let (propertyId, floorId) = try alpha.makeFloor()
        let panoramaId = newID()
        #expect(try alpha.putPanorama(panoramaId, floorId: floorId, bytes: try JPEGFixture.panorama(width: 256)).status == 201)
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let branded = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:])
        let unbranded = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["branding": "unbranded"])
        #expect(branded.json?["branded"] as? Bool == true && unbranded.json?["branded"] as? Bool == false)
        #expect(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["branding": "plain"]).status == 400)
        let (brandedURL, unbrandedURL) = (try #require(branded.string("url")), try #require(unbranded.string("url")))

        let visitor = try harness.client(nil)
        let page = try visitor.send("GET", brandedURL).text
        for expected in ["Harbour Homes", "\(brandedURL)/logo", "\(brandedURL)/brand.css", "Jane Agent", "+44 20 7946 0000", "<title>Villa · Harbour Homes</title>"] {
            #expect(page.contains(expected), "the branded page lacks \(expected)")
        }
        #expect(try visitor.send("GET", "\(brandedURL)/brand.css").text.contains("--accent: #0b5d3b"))
        #expect(try visitor.send("GET", "\(brandedURL)/logo").status == 200)

        // Every page an unbranded link opens, and its embed form.
        let pages = [unbrandedURL, unbrandedURL + "/embed", "\(unbrandedURL)/floors/\(floorId)", "\(unbrandedURL)/panoramas/\(panoramaId)"]
        for path in pages {
            let answer = try visitor.send("GET", path)
            #expect(answer.status == 200, "\(path)")
            let text = answer.text
            for absent in ["Harbour Homes", "Jane Agent", "7946", "/logo", "brand.css", "TourHost"] {
                #expect(!text.contains(absent), "\(path) shows \(absent)")
            }
        }
        // Its error pages too (a panorama the link does not have); a branded link's name the platform.
        let missing = try visitor.send("GET", "\(unbrandedURL)/panoramas/\(newID())")
        #expect(missing.status == 404 && !missing.text.contains("TourHost"))
        #expect(try visitor.send("GET", "\(brandedURL)/panoramas/\(newID())").text.contains("TourHost"))
        #expect(try visitor.send("GET", "\(unbrandedURL)/logo").status == 404)
        #expect(try visitor.send("GET", "\(unbrandedURL)/brand.css").status == 404)
        await harness.finish()
    }

    /// Measurements are in the agency's units (those of its floor naming's country until it
    /// chooses), whatever the visitor's browser; a visitor's switch keeps its choice in a cookie.
    @Test func unitsAreTheAgencysAndAVisitorsChoiceIsKept() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        #expect(try alpha.send("GET", "/v1/branding").string("units") == "metric")
        let (propertyId, floorId) = try alpha.makeFloor()
        #expect(try alpha.putPlan(floorId, mode: "newScan", rooms: [(newID(), "Hall")]).status == 200)
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let url = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:]).string("url"))
        let visitor = try harness.client(nil)
        func floorPage(_ query: String = "", cookie: String? = nil) throws -> RawClient.Response {
            var headers = ["Accept-Language": "en-US,en;q=0.9"]
            if let cookie { headers["Cookie"] = cookie }
            return try visitor.send("GET", "\(url)/floors/\(floorId)\(query)", headers: headers)
        }
        // A UK agency's tour read from a US browser: metres.
        var page = try floorPage().text
        #expect(page.contains(" m²") && !page.contains("ft²") && page.contains("<a aria-current=\"true\" href=\"?units=metric\">Metres</a>"))
        // Floors named as in the US: feet, until the agency chooses metres.
        #expect(try alpha.send("PUT", "/v1/branding", json: ["floorNames": "us"]).string("units") == "imperial")
        #expect(try floorPage().text.contains("ft²"))
        let chosen = try alpha.send("PUT", "/v1/branding", json: ["floorNames": "us", "units": "metric"])
        #expect(chosen.status == 200 && chosen.string("units") == "metric")
        #expect(try floorPage().text.contains(" m²"))
        #expect(try alpha.send("PUT", "/v1/branding", json: ["units": "furlongs"]).text.contains("units must be"))
        // The visitor's switch: the page in feet, and a cookie that keeps them.
        let switched = try floorPage("?units=imperial")
        page = switched.text
        let cookie = try #require(switched.header("Set-Cookie"))
        #expect(page.contains("ft²") && !page.contains(" m²") && cookie.hasPrefix("nt_units=imperial;") && cookie.contains("Max-Age=31536000"))
        #expect(try floorPage(cookie: "nt_units=imperial").text.contains("ft²"))
        #expect(try floorPage(cookie: "nt_units=parsecs").text.contains(" m²"), "a cookie naming no units is the agency's")
        await harness.finish()
    }

    /// Floors without a name are named as the tenant says (UK by default); a plan says when it
    /// was applied, not its revision.
    @Test func floorsAreNamedAsTheTenantNamesThemAndPlansByTheirDay() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        let (propertyId, ground) = try alpha.makeFloor()
        let upstairs = newID()
        #expect(try alpha.putFloor(propertyId, upstairs, number: 1).status == 201)
        #expect(try alpha.putPlan(ground, mode: "newScan", rooms: [(newID(), "Hall")]).status == 200)
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let plan = try #require(((try alpha.send("GET", "/v1/tours/\(tourId)").json?["floors"] as? [[String: Any]])?.first?["plan"]) as? [String: Any])
        let applied = try #require(plan["updatedAt"] as? String)
        let browser = try ViewerBrowser(harness)
        #expect(try browser.signIn(harness.alpha).status == 303)
        var page = try browser.send("GET", "/app/properties/\(propertyId)").text
        #expect(page.contains("Ground floor") && page.contains("First floor") && !page.contains("Floor 1"))
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let parts = applied.prefix(10).split(separator: "-").compactMap { Int($0) }
        #expect(page.contains("Plan updated \(parts[2]) \(months[parts[1] - 1]) \(parts[0])") && !page.contains("Plan revision"))
        #expect(try alpha.send("PUT", "/v1/branding", json: ["floorNames": "us"]).status == 200)
        page = try browser.send("GET", "/app/properties/\(propertyId)").text
        #expect(page.contains("1st floor") && page.contains("2nd floor"))
        #expect(try alpha.send("PUT", "/v1/branding", json: ["floorNames": "numbers"]).status == 200)
        page = try browser.send("GET", "/app/properties/\(propertyId)").text
        #expect(page.contains("Floor 0") && page.contains("Floor 1"))
        await harness.finish()
    }
}
