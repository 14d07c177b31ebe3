import NTAPIModel
import NTFloorPlans
import Foundation
import Testing
@testable import NTTourViewer

/// The pages as pure functions of documents.
@Suite struct ViewerPagesTests {
    static let frame = PageFrame(paths: .app, subtitle: "Acme <Ltd>", csrf: "csrf-value")
    static let widths = PreviewWidths(thumbnail: 320, viewer: 4096, cover: 1024)

    static func tour(roomNames: [String?] = ["Kitchen", "Hall"], continuable: Bool = true, propertyName: String = "Villa") -> TourDocument {
        let rooms = roomNames.enumerated().map { index, name in
            RoomDocument(id: "room-\(index)", floorId: "floor-0", name: name,
                         outline: "[[\(index * 4),0],[\(index * 4 + 4),0],[\(index * 4 + 4),3],[\(index * 4),3]]", height: 2.5, capture: nil)
        }
        let floor = FloorDocument(id: "floor-0", propertyId: "property", number: 0, name: nil, planRevision: 1, continuable: continuable, rooms: rooms)
        let second = FloorDocument(id: "floor-1", propertyId: "property", number: 2, name: nil, planRevision: 0, continuable: false, rooms: [])
        let panoramas = [
            PanoramaDocument(id: "pano-room", propertyId: "property", floorId: "floor-0", roomId: "room-0", contentType: "image/jpeg",
                             size: 1000, sha256: "ab", createdAt: "2026-12-01T05:22:44.123Z"),
            PanoramaDocument(id: "pano-loose", propertyId: "property", floorId: "floor-0", roomId: nil, contentType: "image/jpeg",
                             size: 1000, sha256: "cd", createdAt: "2026-12-01T05:22:45.123Z"),
        ]
        let property = PropertyDocument(id: "property", tourId: "tour", name: propertyName, floorCount: 2, metadata: "{}",
                                        createdAt: "2026-12-01T05:00:00.000Z", updatedAt: "2026-12-01T05:30:00.000Z")
        return TourDocument(tourId: "tour", property: property, floors: [
            TourDocument.Floor(floor: floor, plan: TourDocument.Plan(revision: 1, structure: nil), worldMap: nil, panoramas: panoramas),
            TourDocument.Floor(floor: second, plan: nil, worldMap: nil, panoramas: []),
        ])
    }

    static func text(_ bytes: [UInt8]?) -> String { String(decoding: bytes ?? [], as: UTF8.self) }

    /// A room's previews are named by room and place, as the walk names them, then when they
    /// were taken; a trail's separators stand between its steps, none after the last.
    @Test func thumbnailsAreNamedByRoomAndTheTrailEndsWithItsLastStep() throws {
        let room = Self.text(ViewerPages.room(Self.frame, Self.tour(), roomId: "room-0", widths: Self.widths))
        #expect(room.contains("alt=\"Kitchen\"") && room.contains("<span class=\"name\">Kitchen</span> <span class=\"taken\">taken 2026-12-01 05:22 UTC</span>"))
        let floor = Self.text(ViewerPages.floor(Self.frame, Self.tour(), floorId: "floor-0", widths: Self.widths))
        #expect(floor.contains("<span class=\"name\">Ground floor</span>"), "a panorama without a room is named by its floor")
        let start = try #require(room.range(of: "<nav class=\"crumbs\""))
        let end = try #require(room.range(of: "</nav>", range: start.upperBound..<room.endIndex))
        let crumbs = String(room[start.lowerBound..<end.upperBound])
        let steps = crumbs.components(separatedBy: "<a ").count - 1, separators = crumbs.components(separatedBy: "class=\"sep\"").count - 1
        #expect(steps == 3 && separators == 2 && crumbs.hasSuffix("</a></nav>"), "\(crumbs)")
    }

    @Test func escapingCoversEveryCharacterThatStartsMarkupOrEndsAnAttribute() {
        #expect(MarkupEscaping.escape(#"<a href="x" onclick='y'>&</a>"#) == "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;")
        #expect(MarkupEscaping.escape("Küche 🏠") == "Küche 🏠")
    }

    @Test func everyValueFromTheDatabaseIsEscaped() {
        let hostile = #"<script>alert("x")</script>"#
        let tour = Self.tour(roomNames: [hostile, "Hall"], propertyName: hostile)
        let pages = [
            ViewerPages.property(Self.frame, tour, status: ServerStatusDocument(propertyId: "property", tourId: "tour", floorCount: 2, roomCount: 2,
                                                                                 panoramaCount: 2, panoramaBytes: 2000, updatedAt: "x"), shares: nil, widths: Self.widths),
            ViewerPages.floor(Self.frame, tour, floorId: "floor-0", widths: Self.widths),
            ViewerPages.room(Self.frame, tour, roomId: "room-0", widths: Self.widths),
        ].map(Self.text)
        for page in pages {
            #expect(!page.contains("<script>alert"))
            #expect(page.contains("&lt;script&gt;alert(&quot;x&quot;)"))
            #expect(page.contains("Acme &lt;Ltd&gt;"))
        }
    }

    @Test func theFloorPlanHasOnePolygonPerRoomWithItsNameAndLink() {
        let page = Self.text(ViewerPages.floor(Self.frame, Self.tour(), floorId: "floor-0", widths: Self.widths))
        #expect(page.components(separatedBy: "<polygon").count - 1 == 2)
        #expect(page.contains(">Kitchen<tspan class=\"area\"") && page.contains(">Hall<tspan class=\"area\""))
        #expect(page.contains("href=\"/app/rooms/room-0\"") && page.contains("href=\"/app/rooms/room-1\""))
        // The panorama without a room is listed under the plan; the room's is not.
        #expect(page.contains("/app/panoramas/pano-loose/preview?width=320"))
        #expect(!page.contains("pano-room"))
        #expect(page.contains("<g class=\"scale\">"))
    }

    @Test func thePlanIsScaledToFitAndItsScaleBarIsARoundNumberOfMetres() {
        let drawing = FloorPlanDrawing(rooms: [
            FloorPlanDrawing.Room(id: "a", name: "A", points: [(10, 20), (30, 20), (30, 28), (10, 28)]),
        ])
        // 20 m wide across 800 − 2 × 24 pixels.
        #expect(abs(drawing.scale - 752.0 / 20) < 1e-9)
        #expect(drawing.pixel((10, 20)) == (24, 24))
        #expect(drawing.pixel((30, 28)).x == 776)
        // A sixth of the width is 3.5 m: 5 m is the closest round length; in feet (11.5), 10.
        #expect(drawing.scaleBar(.metric).metres == 5 && drawing.scaleBar(.metric).label == "5 m")
        #expect(drawing.scaleBar(.imperial).metres == 10 * 0.3048 && drawing.scaleBar(.imperial).label == "10 ft")
        #expect(PlanGeometry.centroid([(0, 0), (4, 0), (4, 2), (0, 2)]) == (2, 1))
        // A tall floor is limited by its height instead.
        let tall = FloorPlanDrawing(rooms: [FloorPlanDrawing.Room(id: "b", name: "B", points: [(0, 0), (1, 0), (1, 100), (0, 100)])])
        #expect(abs(tall.scale - 752.0 * 1.25 / 100) < 1e-9)
    }

    /// A room's name and area stay off the dots of the panoramas in it (a panorama often stands
    /// in the middle of its room) and off one another, inside the room's bounds.
    @Test func aRoomsLabelKeepsOffTheDotsOnThePlan() throws {
        let look = FloorPlanDrawing.Look.panel
        let bounds = PlanBox(left: 0, top: 0, right: 400, bottom: 300)
        let lines = ["Living room", "291 ft²"]
        let dots: [(x: Double, y: Double)] = [(200, 150), (200, 120)]
        #expect(PlanGeometry.labelPlace(centre: (200, 150), lines: lines, fontSize: look.fontSize, dotRadius: look.dotRadius, within: bounds, dots: [], taken: []) == (200, 150),
                "with nothing in the way the label is at the centre")
        let placed = PlanGeometry.labelPlace(centre: (200, 150), lines: lines, fontSize: look.fontSize, dotRadius: look.dotRadius, within: bounds, dots: dots, taken: [])
        let box = PlanGeometry.labelBox(at: placed, lines: lines, fontSize: look.fontSize)
        #expect(!dots.contains { box.meets(circle: $0, radius: look.dotRadius, gap: 0) }, "clear of the dots: \(placed)")
        #expect((0...400).contains(placed.x) && (0...300).contains(placed.y))
        let roomBelow = PlanBox(left: 0, top: 0, right: 400, bottom: 600)
        let other = PlanGeometry.labelPlace(centre: placed, lines: ["Hall", "129 ft²"], fontSize: look.fontSize, dotRadius: look.dotRadius, within: roomBelow, dots: dots, taken: [box])
        #expect(!PlanGeometry.labelBox(at: other, lines: ["Hall", "129 ft²"], fontSize: look.fontSize).meets(box), "clear of a label placed before")
        // The page's plan draws its dots and text at the panel's size there, its own here.
        var page = HTMLWriter()
        FloorPlanDrawing(Self.tour().floors[0].floor.rooms).write(into: &page, roomURL: { $0 }, marks: [
            FloorPlanDrawing.Mark(position: try PanoramaPosition(x: 2, y: 1.5), heading: nil, url: "/p", label: "Kitchen", current: false)], units: .metric, look: .panel)
        let svg = Self.text(page.bytes)
        #expect(svg.contains("font-size=\"30\"") && svg.contains("<circle r=\"32\"/>"))
    }

    /// The agent's property page opens the tour from its cover.
    @Test func thePropertyPageShowsItsCoverAndViewsTheTour() {
        let page = Self.text(ViewerPages.property(Self.frame, Self.tour(), status: ServerStatusDocument(
            propertyId: "property", tourId: "tour", floorCount: 2, roomCount: 2, panoramaCount: 2, panoramaBytes: 2048, updatedAt: "x"), shares: nil, widths: Self.widths))
        #expect(page.contains("<a class=\"cover\" href=\"/app/panoramas/pano-room\"><img alt=\"\" src=\"/app/panoramas/pano-room/preview?width=1024\"><span>View the tour</span></a>"))
    }

    @Test func anOutlineThatDoesNotReadIsLeftOut() {
        let rooms = [RoomDocument(id: "r", floorId: "f", name: "R", outline: "[[0,0],[1]]", height: nil, capture: nil)]
        #expect(FloorPlanDrawing(rooms).rooms.isEmpty)
    }

    @Test func floorsAreTitledAsTheScreensTitleThemAndAContinuableOneSaysSo() {
        let page = Self.text(ViewerPages.property(Self.frame, Self.tour(), status: ServerStatusDocument(
            propertyId: "property", tourId: "tour", floorCount: 2, roomCount: 2, panoramaCount: 2, panoramaBytes: 2048, updatedAt: "x"), shares: nil, widths: Self.widths))
        #expect(page.contains(">Ground floor</a>") && page.contains(">Floor 2</a>"))
        #expect(page.contains("Can be continued"))
        #expect(page.contains("2 panoramas (2.0 KB)"))
        let notContinuable = Self.text(ViewerPages.property(Self.frame, Self.tour(continuable: false), status: ServerStatusDocument(
            propertyId: "property", tourId: "tour", floorCount: 2, roomCount: 2, panoramaCount: 2, panoramaBytes: 0, updatedAt: "x"), shares: nil, widths: Self.widths))
        #expect(!notContinuable.contains("Can be continued"))
    }

    @Test func shareFormsCarryTheCSRFTokenAndASharedTourHasNoForms() {
        let shares = ShareSection(shares: [ShareDocument(id: "share-1", tourId: "tour", url: nil, label: "For <the> Millers", createdAt: "a", expiresAt: "b"),
                                           ShareDocument(id: "share-2", tourId: "tour", url: nil, createdAt: "a", expiresAt: "b", offersOriginals: true)],
                                  madeURL: "http://h/t/secret", madeEmbeddable: true, lifetimes: [3600, 86_400], defaultLifetime: 86_400)
        let status = ServerStatusDocument(propertyId: "property", tourId: "tour", floorCount: 2, roomCount: 2, panoramaCount: 2, panoramaBytes: 0, updatedAt: "x")
        let page = Self.text(ViewerPages.property(Self.frame, Self.tour(), status: status, shares: shares, widths: Self.widths))
        // Sign out, make a link, revoke each of two: each form carries the token.
        #expect(page.components(separatedBy: "<form method=\"post\"").count - 1 == 4)
        #expect(page.components(separatedBy: "name=\"csrf\" value=\"csrf-value\"").count - 1 == 4)
        #expect(page.contains("value=\"http://h/t/secret\""))
        // The ids a host's backend needs, folded away at the end.
        #expect(page.contains("<details class=\"ids\"><summary>Ids for your systems</summary><p>Tour <code>tour</code> · property <code>property</code></p></details></main>"))
        #expect(page.contains("<option value=\"3600\">1 hour</option><option value=\"86400\" selected>1 day</option>"))
        // The list says each link's label and what it offers; the link just made comes with its embed snippet.
        #expect(page.contains("<strong>For &lt;the&gt; Millers</strong> · Made") && page.contains(" · views only") && page.contains(" · full-size images offered"))
        #expect(page.contains("<textarea readonly id=\"made-embed\" class=\"share-url\" rows=\"3\">&lt;div style=&quot;position:relative;padding-top:56.25%&quot;&gt;&lt;iframe src=&quot;http://h/t/secret/embed&quot;"))
        #expect(page.contains("allow=&quot;fullscreen; gyroscope; accelerometer&quot;"))
        let shared = PageFrame(paths: .share(secret: "s3cret"), subtitle: nil, csrf: nil)
        let sharedPage = Self.text(ViewerPages.shareStart(shared, Self.tour(), status: status, widths: Self.widths))
        #expect(!sharedPage.contains("<form"))
        #expect(sharedPage.contains("href=\"/t/s3cret/panoramas/pano-loose\""))
        #expect(!sharedPage.contains("/app/properties"))
    }

    /// issue "The tour as a product", for visitors, and "The tour a buyer walks": a share link
    /// opens into its cover panorama's view titled by the property, with the metadata marked
    /// public and each floor's rooms (ways to their panoramas) in the panel; no tour id,
    /// revisions, sizes or metadata kept private.
    @Test func aSharedTourOpensIntoItsCoverPanoramaWithWhatVisitorsRead() {
        var tour = Self.tour()
        tour.property.metadata = #"{"internal-ref":"C-17","public.address":"12 Maple Street","public.agent_phone":"+44 20 7946 0000"}"#
        let status = ServerStatusDocument(propertyId: "property", tourId: "tour", floorCount: 2, roomCount: 2, panoramaCount: 2, panoramaBytes: 2048, updatedAt: "x")
        let shared = PageFrame(paths: .share(secret: "s3cret"), subtitle: nil, csrf: nil, platformName: nil)
        let page = Self.text(ViewerPages.shareStart(shared, tour, status: status, widths: Self.widths))
        #expect(page.contains("<body class=\"tour visitor\""))
        #expect(page.contains("<div class=\"heading\"><h1>Villa</h1><p class=\"place\">Kitchen</p></div><div class=\"viewer\" id=\"viewer\" data-panorama=\"pano-room\""))
        #expect(page.contains("<dt>Address</dt><dd>12 Maple Street</dd><dt>Agent phone</dt><dd>+44 20 7946 0000</dd>"))
        // The plan in the panel: each room's size and area, and the floor's.
        #expect(page.contains("<ul class=\"sizes\"><li>Kitchen <span class=\"measure\">4.0 × 3.0 m · 12.0 m²</span></li><li>Hall <span class=\"measure\">4.0 × 3.0 m · 12.0 m²</span></li></ul><p class=\"total\">Floor area 24.0 m²</p>"))
        #expect(page.contains("2 floors · 2 rooms · 2 panoramas</p><h3>Ground floor</h3><ul class=\"rooms\"><li><a href=\"/t/s3cret/panoramas/pano-room\">Kitchen</a></li><li><a href=\"/t/s3cret/panoramas/pano-loose\">Ground floor</a></li></ul>"))
        for workshop in ["C-17", "internal", "tour</code>", "Plan revision", "Can be continued", "KB", "Room\"", ">Hall</a>"] {
            #expect(!page.contains(workshop), "\(workshop)") // Hall has no panorama: a visitor has nothing to see there
        }
        #expect(PublicMetadata.facts("not json").isEmpty && PublicMetadata.facts(#"{"public.":"x","public.a":""}"#).isEmpty)
        // The platform's name only where the operator names it: none by default.
        #expect(page.contains("<title>Villa</title>") && !page.contains(PageFrame.appName))
        var named = shared
        named.platformName = "TourHost"
        let hosted = Self.text(ViewerPages.shareStart(named, tour, status: status, widths: Self.widths))
        #expect(hosted.contains("<title>Villa · TourHost</title>") && hosted.contains("<div class=\"brand\">TourHost"))
        // A cover the tenant chose opens the link; one that names no panorama of the tour is the first panorama's.
        tour.property.metadata = #"{"cover":"pano-loose"}"#
        let chosen = Self.text(ViewerPages.shareStart(shared, tour, status: status, widths: Self.widths))
        #expect(chosen.contains("<h1>Villa</h1><p class=\"place\">Ground floor</p></div><div class=\"viewer\" id=\"viewer\" data-panorama=\"pano-loose\""))
        tour.property.metadata = #"{"cover":"another-tours-panorama"}"#
        let unknown = Self.text(ViewerPages.shareStart(shared, tour, status: status, widths: Self.widths))
        #expect(unknown.contains("data-panorama=\"pano-room\""))
        // A tour without panoramas: its floors and rooms as a list.
        for index in tour.floors.indices { tour.floors[index].panoramas = [] }
        let empty = Self.text(ViewerPages.shareStart(shared, tour, status: status, widths: Self.widths))
        #expect(empty.contains("<h1>Villa</h1>") && !empty.contains("id=\"viewer\"") && empty.contains("href=\"/t/s3cret/floors/floor-0\"")
                && !empty.contains(">Kitchen</a>"))
    }

    @Test func theViewerPageLoadsItsScriptFromTheOriginAndFallsBackToTheImage() {
        let page = Self.text(ViewerPages.panorama(Self.frame, Self.tour(), panoramaId: "pano-room", widths: Self.widths))
        #expect(page.contains("<script src=\"/app/static/viewer.js\" defer></script>"))
        #expect(page.contains("<img class=\"fallback\""))
        // Drawn from the small preview at once, sharpened by the largest once it has come.
        #expect(page.contains("<img class=\"fallback\" alt=\"The panorama as a flat image\" src=\"/app/panoramas/pano-room/preview?width=1024\""))
        #expect(page.contains("data-full=\"/app/panoramas/pano-room/preview?width=4096\""))
        #expect(!page.contains("<script>")) // nothing inline: the CSP allows only 'self'
        #expect(!page.contains("style=\""))
        #expect(ViewerPages.panorama(Self.frame, Self.tour(), panoramaId: "unknown", widths: Self.widths) == nil)
    }

    @Test func theListPagesAndSearches() {
        let property = Self.tour().property
        let items = [PropertySummary(property: property, floors: 2, rooms: 3, panoramas: 1)]
        let page = Self.text(ViewerPages.propertyList(Self.frame, items, query: "a&b c", page: 2, hasNext: true))
        #expect(page.contains("2 floors · 3 rooms · 1 panorama"))
        #expect(page.contains("href=\"/app/?page=1&amp;q=a%26b%20c\"") && page.contains("href=\"/app/?page=3&amp;q=a%26b%20c\""))
        #expect(page.contains("value=\"a&amp;b c\""))
        // An agent's list names no internal id.
        #expect(!page.contains("<code>tour</code>") && page.contains("<span class=\"meta\">Updated 2026-12-01 05:30 UTC</span>"))
    }

    @Test func numbersAndTimesPrintAsThePagesShowThem() {
        #expect(Numerals.decimal(2.345, places: 1) == "2.3")
        #expect(Numerals.decimal(-0.04, places: 1) == "0.0")
        #expect(Numerals.decimal(-1.25, places: 2) == "-1.25")
        #expect(Format.bytes(1_040_000) == "1015.6 KB")
        #expect(Format.bytes(512) == "512 bytes")
        #expect([400, 45_000, 68_400, 120_000, 7_500_000, 7_200_000].map { Format.duration(milliseconds: $0) } == ["0 s", "45 s", "1 min 8 s", "2 min", "2 h 5 min", "2 h"])
        #expect(Format.time("2026-12-01T05:22:44.123Z") == "2026-12-01 05:22 UTC")
        #expect(Lifetime.describe(7 * 86_400) == "7 days")
        #expect(Lifetime.describe(3600) == "1 hour")
    }
}
