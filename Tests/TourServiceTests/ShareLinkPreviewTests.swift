import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTServiceModel
@testable import NTTourService
@testable import NTViewerService

/// A share link pasted into a chat or a listing shows the home (docs/api.md "Share links"): the
/// page carries Open Graph and Twitter card tags with absolute URLs, the picture is the cover
/// panorama made again from its pixels (none of the upload's EXIF goes with it), an unbranded
/// link's tags name no agency, and the chat app's fetch counts no view.
@Suite(.hangGuard, .testThreads) struct ShareLinkPreviewTests {
    /// `jpeg` with an EXIF segment after its SOI, as a phone writes one (here with a maker's name).
    private func withExif(_ jpeg: [UInt8]) -> [UInt8] {
        let tiff: [UInt8] = Array("II*\u{0}".utf8) + [8, 0, 0, 0, 0, 0] + Array("NoughtyPhone secret place".utf8)
        let payload = Array("Exif\u{0}\u{0}".utf8) + tiff
        let length = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + jpeg.dropFirst(2)
    }

    private func content(_ page: String, _ key: String) -> String? {
        for attribute in ["property", "name"] {
            let marker = "<meta \(attribute)=\"\(key)\" content=\""
            if let start = page.range(of: marker), let end = page[start.upperBound...].firstIndex(of: "\"") {
                return String(page[start.upperBound..<end])
            }
        }
        return nil
    }

    @Test func aChatAppsFetchGetsTheCardAndCountsNoView() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        #expect(try alpha.send("PUT", "/v1/branding", json: ["name": "Harbour Homes"]).status == 200)
        let (propertyId, floorId) = try alpha.makeFloor()
        let panorama = withExif(try JPEGFixture.panorama(width: 2048))
        #expect(try alpha.putPanorama(newID(), floorId: floorId, bytes: panorama).status == 201)
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let labelled = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["label": "Sent to the Millers"])
        let unbranded = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["branding": "unbranded"])
        let (url, shareId) = (try #require(labelled.string("url")), try #require(labelled.string("id")))

        let chat = try harness.client(nil)
        let whatsApp = ["User-Agent": "WhatsApp/2.23.20.0 A"]
        let page = try chat.send("GET", url, headers: whatsApp)
        #expect(page.status == 200)
        #expect(!page.text.contains("data-visit="), "a chat app's fetch records no visit")
        #expect(content(page.text, "og:type") == "website")
        #expect(content(page.text, "og:title") == "Sent to the Millers")
        #expect(content(page.text, "twitter:card") == "summary_large_image")
        let description = try #require(content(page.text, "og:description"))
        #expect(description.contains("Harbour Homes") && description.contains("1 floor, 1 panorama"), "\(description)")
        let image = try #require(content(page.text, "og:image"))
        #expect(image.hasPrefix("http://") && image.hasSuffix(url + "/card.jpg"), "absolute: \(image)")
        #expect(content(page.text, "og:url")?.hasSuffix(url) == true)

        let picture = try chat.send("GET", url + "/card.jpg", headers: whatsApp)
        #expect(picture.status == 200 && picture.header("Content-Type") == "image/jpeg")
        #expect(JPEGFixture.dimensions(picture.body) == [1260, 630])
        #expect(!picture.text.contains("Exif") && !picture.text.contains("NoughtyPhone"), "made again from the pixels")

        // The unbranded link's card names no agency; a buyer's browser counts its view.
        let unbrandedPage = try chat.send("GET", try #require(unbranded.string("url")), headers: ["User-Agent": "facebookexternalhit/1.1 Facebot Twitterbot/1.0"])
        #expect(content(unbrandedPage.text, "og:description")?.contains("Harbour Homes") == false)
        #expect(content(unbrandedPage.text, "og:title") == "Villa")
        #expect(try alpha.send("GET", "/v1/shares/\(shareId)/stats").int("views") == 0)
        #expect(try chat.send("GET", url, headers: ["User-Agent": "Mozilla/5.0 (iPhone) Safari/604.1"]).text.contains("data-visit="))
        #expect(try alpha.send("GET", "/v1/shares/\(shareId)/stats").int("views") == 1)
        // The app's own pages carry none of it.
        let agent = try ViewerBrowser(harness)
        #expect(try agent.signIn(harness.alpha).status == 303)
        #expect(!(try agent.send("GET", "/app/properties/\(propertyId)").text.contains("og:title")))
        await harness.finish()
    }
}
