import NTAPIModel
import NTFloorPlans

/// The share links of a property page that manages them.
public struct ShareSection: Sendable {
    /// The live links, newest first (their URLs are shown once, when made).
    public var shares: [ShareDocument]
    /// The absolute URL of a link just made, shown this once.
    public var madeURL: String?
    /// Whether the link just made may be framed somewhere: its embed snippet is shown with it.
    public var madeEmbeddable: Bool
    /// The lifetimes offered, in seconds, and the one chosen at first.
    public var lifetimes: [Int]
    public var defaultLifetime: Int

    public init(shares: [ShareDocument], madeURL: String?, madeEmbeddable: Bool = false, lifetimes: [Int], defaultLifetime: Int) {
        self.shares = shares
        self.madeURL = madeURL
        self.madeEmbeddable = madeEmbeddable
        self.lifetimes = lifetimes
        self.defaultLifetime = defaultLifetime
    }
}

/// The preview widths the pages ask for (each one of the server's fixed widths).
public struct PreviewWidths: Sendable {
    /// Thumbnails in lists.
    public var thumbnail: Int
    /// What the 360° viewer draws, and its plain-image fallback.
    public var viewer: Int
    /// A shared tour's cover image.
    public var cover: Int

    public init(thumbnail: Int, viewer: Int, cover: Int) {
        self.thumbnail = thumbnail
        self.viewer = viewer
        self.cover = cover
    }
}

/// The cube tiles a panorama is drawn from, once the server has made them: faces `faceSize`
/// pixels wide at the largest of `levels` levels, each level half the next, cut into
/// `tileSize` tiles.
public struct ViewerTiles: Sendable, Equatable {
    public var faceSize: Int
    public var levels: Int
    public var tileSize: Int

    public init(faceSize: Int, levels: Int, tileSize: Int) {
        self.faceSize = faceSize
        self.levels = levels
        self.tileSize = tileSize
    }
}

/// The seed's four screens as HTML, plus sign-in and errors: pure functions of documents, so
/// tests and the benchmark call them directly.
public enum ViewerPages {
    public static func signIn(message: String?, csrf: String) -> [UInt8] {
        Layout.page(PageFrame(paths: .app, subtitle: nil, csrf: nil), title: "Sign in") { page in
            page.raw("<section class=\"card narrow\"><h1>Sign in</h1><p>Use a token your administrator gave you (<code>toursd tokens create</code>).</p>")
            if let message { page.element("<p class=\"error\" role=\"alert\">", message, "</p>") }
            page.raw("<form method=\"post\" action=\"")
            page.text(ViewerPaths.signIn)
            page.raw("\">")
            page.hidden("csrf", csrf)
            page.raw("<label for=\"token\">Token</label><input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"current-password\" required autofocus>")
            page.raw("<button type=\"submit\">Sign in</button></form></section>")
        }
    }

    /// The property list (`PropertyListViewController`): a page of them, searchable by name.
    public static func propertyList(_ frame: PageFrame, _ items: [PropertySummary], query: String, page number: Int, hasNext: Bool) -> [UInt8] {
        Layout.page(frame, title: "Properties") { page in
            page.raw("<h1>Properties</h1><form method=\"get\" action=\"")
            page.text(ViewerPaths.list)
            page.raw("\" class=\"search\" role=\"search\"><input type=\"search\" name=\"q\" placeholder=\"Search by name\" aria-label=\"Search by name\" value=\"")
            page.text(query)
            page.raw("\"><button type=\"submit\">Search</button></form>")
            guard !items.isEmpty else {
                page.raw("<p class=\"empty\">")
                page.text(query.isEmpty ? "No properties yet: a capture station's first sync brings them here." : "No property has “\(query)” in its name.")
                page.raw("</p>")
                return
            }
            page.raw("<ul class=\"properties\">")
            for item in items {
                page.raw("<li><a class=\"property\" href=\"")
                page.text(frame.paths.property(item.property.id))
                page.raw("\"><span class=\"name\">")
                page.text(item.property.name)
                page.raw("</span><span class=\"counts\">")
                page.text([Format.count(item.floors, "floor", "floors"), Format.count(item.rooms, "room", "rooms"),
                           Format.count(item.panoramas, "panorama", "panoramas")].joined(separator: " · "))
                page.raw("</span><span class=\"meta\">Updated ")
                page.text(Format.time(item.property.updatedAt))
                page.raw("</span></a></li>")
            }
            page.raw("</ul><nav class=\"pages\">")
            let search = query.isEmpty ? "" : "&q=" + URLComponent.encode(query)
            if number > 1 { page.link(ViewerPaths.list + "?page=\(number - 1)" + search, "← Previous") }
            page.element("<span>", "Page \(number)", "</span>")
            if hasNext { page.link(ViewerPaths.list + "?page=\(number + 1)" + search, "Next →") }
            page.raw("</nav>")
        }
    }

    /// One property's floors and rooms in the app, with the server's status; its share links
    /// when the page manages them. (A share link's first page is `shareStart`.)
    public static func property(_ frame: PageFrame, _ tour: TourDocument, status: ServerStatusDocument, shares: ShareSection?,
                                widths: PreviewWidths) -> [UInt8] {
        let property = tour.property
        // The script: a deep link naming a panorama, opened here, goes to it.
        return Layout.page(frame, title: property.name, crumbs: crumbs(frame, tour, upTo: .list), script: true) { page in
            page.element("<h1>", property.name, "</h1>")
            page.raw("<p class=\"status\">")
            page.text([Format.count(status.floorCount, "floor", "floors"), Format.count(status.roomCount, "room", "rooms"),
                       Format.count(status.panoramaCount, "panorama", "panoramas") + " (\(Format.bytes(status.panoramaBytes)))",
                       "updated " + Format.time(status.updatedAt)].joined(separator: " · "))
            page.raw("</p>")
            // The tour as its visitors open it: its cover, a click into the walk.
            if let cover = coverPanorama(of: tour) {
                page.raw("<a class=\"cover\" href=\"")
                page.text(frame.paths.panorama(cover))
                page.raw("\"><img alt=\"\" src=\"")
                page.text(frame.paths.preview(cover, width: widths.cover))
                page.raw("\"><span>View the tour</span></a>")
            }
            writeFloorPlanDownloads(&page, tour, frame.paths)
            if tour.floors.isEmpty { page.raw("<p class=\"empty\">No floors on the server yet.</p>") }
            for floor in tour.floors {
                page.raw("<section class=\"card floor\"><h2>")
                page.link(frame.paths.floor(floor.floor.id), FloorTitle.of(number: floor.floor.number, name: floor.floor.name))
                page.raw("</h2><p class=\"meta\">")
                page.text(floor.plan.map { plan in plan.updatedAt.map { "Plan updated " + Format.day($0) } ?? "Plan made" } ?? "No plan yet")
                page.text(" · " + Format.count(floor.panoramas.count, "panorama", "panoramas"))
                page.raw("</p>")
                if floor.floor.continuable {
                    page.raw("<p class=\"badge continuable\">Can be continued: the plan and its saved world map are on the server, so a station can add rooms to it.</p>")
                }
                if !floor.floor.rooms.isEmpty { writeRooms(&page, floor, frame.paths, onlyWithPanoramas: false) }
                page.raw("</section>")
            }
            if let shares, let csrf = frame.csrf { writeShares(&page, shares, propertyId: property.id, csrf: csrf) }
            // What the host's backend names it by, out of an agent's way.
            page.raw("<details class=\"ids\"><summary>Ids for your systems</summary><p>Tour <code>")
            page.text(tour.tourId)
            page.raw("</code> · property <code>")
            page.text(property.id)
            page.raw("</code></p></details>")
        }
    }

    /// A shared tour without panoramas: the property's name, the metadata the tenant marked
    /// public, and its floors (each a link to its plan).
    private static func visitorProperty(_ frame: PageFrame, _ tour: TourDocument, status: ServerStatusDocument) -> [UInt8] {
        Layout.page(frame, title: tour.property.name) { page in
            page.element("<h1>", tour.property.name, "</h1>")
            writeFacts(&page, tour, status: status)
            writeContact(&page, frame)
            writeFloorPlanLink(&page, tour, frame)
            for floor in tour.floors.sorted(by: { $0.floor.number < $1.floor.number }) {
                page.raw("<section class=\"card floor\"><h2>")
                page.link(frame.paths.floor(floor.floor.id), FloorTitle.of(number: floor.floor.number, name: floor.floor.name))
                page.raw("</h2>")
                writeRooms(&page, floor, frame.paths, onlyWithPanoramas: true)
                page.raw("</section>")
            }
        }
    }

    /// A floor's rooms, each a link with its count of panoramas.
    private static func writeRooms(_ page: inout HTMLWriter, _ floor: TourDocument.Floor, _ paths: ViewerPaths, onlyWithPanoramas: Bool) {
        let perRoom = Dictionary(grouping: floor.panoramas.compactMap(\.roomId), by: { $0 }).mapValues(\.count)
        page.raw("<ul class=\"rooms\">")
        for room in floor.floor.rooms where !onlyWithPanoramas || perRoom[room.id] != nil {
            page.raw("<li>")
            page.link(paths.room(room.id), room.name ?? "Room")
            page.element("<span class=\"meta\">", Format.count(perRoom[room.id] ?? 0, "panorama", "panoramas"), "</span>")
            page.raw("</li>")
        }
        page.raw("</ul>")
    }

    private static func writeShares(_ page: inout HTMLWriter, _ section: ShareSection, propertyId: String, csrf: String) {
        page.raw("<section class=\"card shares\"><h2>Share links</h2><p>A share link opens this tour, read-only, without signing in, until it expires or is revoked.</p>")
        if let url = section.madeURL {
            // Each with a copy button the script shows.
            page.raw("<div class=\"made\" role=\"status\"><label for=\"made-url\">New link</label><div class=\"copyable\"><input readonly id=\"made-url\" class=\"share-url\" value=\"")
            page.text(url)
            page.raw("\"><button type=\"button\" class=\"copy hidden\" data-copies=\"made-url\">Copy</button></div>")
            if section.madeEmbeddable {
                page.raw("<label for=\"made-embed\">To embed it on the sites it names, paste this into their page</label><div class=\"copyable\"><textarea readonly id=\"made-embed\" class=\"share-url\" rows=\"3\">")
                page.text(EmbedSnippet.html(embedURL: url + ViewerPaths.embedSuffix))
                page.raw("</textarea><button type=\"button\" class=\"copy hidden\" data-copies=\"made-embed\">Copy</button></div>")
            }
            page.raw("</div>")
        }
        page.raw("<form method=\"post\" action=\"")
        page.text(ViewerPaths.app.property(propertyId) + "/shares")
        page.raw("\" class=\"share-form\">")
        page.hidden("csrf", csrf)
        page.raw("<label for=\"share-label\">Label</label><input id=\"share-label\" name=\"label\" maxlength=\"200\" placeholder=\"Sent to the Millers (optional)\">")
        page.raw("<label for=\"lifetime\">Expires after</label><select id=\"lifetime\" name=\"expiresInSeconds\">")
        for seconds in section.lifetimes {
            page.raw("<option value=\"")
            page.text(seconds)
            page.raw(seconds == section.defaultLifetime ? "\" selected>" : "\">")
            page.text(Lifetime.describe(seconds))
            page.raw("</option>")
        }
        page.raw("</select><label for=\"frame-ancestors\">Sites that may embed it</label>")
        page.raw("<input id=\"frame-ancestors\" name=\"frameAncestors\" placeholder=\"https://agency.example (optional)\" size=\"32\">")
        page.raw("<label for=\"branding\">Branding</label><select id=\"branding\" name=\"branding\"><option value=\"branded\" selected>Your branding</option>")
        page.raw("<option value=\"unbranded\">Unbranded (no logo, contact or platform name: for MLS listings)</option></select>")
        page.raw("<label class=\"check\"><input type=\"checkbox\" name=\"offersOriginals\" value=\"1\"> Offer the full-size images (without the camera's metadata)</label>")
        page.raw("<label class=\"check\"><input type=\"checkbox\" name=\"offersFloorPlans\" value=\"1\"> Offer the floor plans to download (a PDF, branded as the link is)</label>")
        page.raw("<button type=\"submit\">Make a share link</button></form>")
        if section.shares.isEmpty {
            page.raw("<p class=\"empty\">No active share links.</p>")
        } else {
            page.raw("<ul class=\"share-list\">")
            for share in section.shares {
                page.raw("<li><span>")
                if let label = share.label { page.element("<strong>", label, "</strong> · ") }
                page.raw("Made ")
                page.text(Format.time(share.createdAt))
                page.raw(", expires ")
                page.text(Format.time(share.expiresAt))
                if !share.frameAncestors.isEmpty {
                    page.text(" · may be embedded on " + share.frameAncestors.joined(separator: ", "))
                }
                page.text(share.offersOriginals ? " · full-size images offered" : " · views only")
                if share.offersFloorPlans { page.text(" · floor plans offered") }
                if !share.branded { page.text(" · unbranded") }
                let watched = share.milliseconds >= 1000 ? ", " + Format.duration(milliseconds: share.milliseconds) + " watched" : ""
                page.element("<span class=\"views\">", " · " + Format.count(share.views, "view", "views") + ", " + Format.count(share.visitors, "visitor", "visitors")
                             + watched, "</span>")
                page.raw("</span>")
                // Copied again whenever it is needed (docs/security.md "A live link can be copied again").
                if let url = share.url {
                    page.raw("<input readonly class=\"share-url\" aria-label=\"The link\" id=\"link-")
                    page.text(share.id)
                    page.raw("\" value=\"")
                    page.text(url)
                    page.raw("\"><button type=\"button\" class=\"copy hidden\" data-copies=\"link-")
                    page.text(share.id)
                    page.raw("\">Copy link</button>")
                }
                page.raw("<form method=\"post\" action=\"")
                page.text(ViewerPaths.app.base + "/shares/" + share.id + "/revoke")
                page.raw("\" class=\"inline\">")
                page.hidden("csrf", csrf)
                page.raw("<button type=\"submit\" class=\"danger\">Revoke</button></form></li>")
            }
            page.raw("</ul>")
        }
        page.raw("</section>")
    }

    /// One floor: its plan drawn, each room a link, and the panoramas without a room.
    public static func floor(_ frame: PageFrame, _ tour: TourDocument, floorId: String, widths: PreviewWidths) -> [UInt8]? {
        guard let floor = tour.floors.first(where: { $0.floor.id == floorId }) else { return nil }
        let title = FloorTitle.of(number: floor.floor.number, name: floor.floor.name)
        return Layout.page(frame, title: title, crumbs: crumbs(frame, tour, upTo: .property)) { page in
            page.element("<h1>", title, "</h1>")
            if floor.floor.continuable { page.raw("<p class=\"badge continuable\">Can be continued</p>") }
            let drawing = FloorPlanDrawing(floor.floor.rooms)
            if drawing.rooms.isEmpty {
                page.raw("<p class=\"empty\">No plan yet.</p>")
            } else {
                page.raw("<figure class=\"card plan-figure\">")
                // Where each panorama stands, where its capture said: a dot that opens it.
                let walk = TourWalk(tour)
                let marks = walk.stops.filter { $0.floor.floor.id == floorId }.compactMap { stop in
                    stop.panorama.position.map { FloorPlanDrawing.Mark(position: $0, heading: stop.panorama.heading, url: frame.paths.panorama(stop.panorama.id), label: stop.title, current: false) }
                }
                drawing.write(into: &page, roomURL: { frame.paths.room($0) }, marks: marks, units: frame.units)
                page.raw("</figure><ul class=\"rooms\">")
                for room in floor.floor.rooms {
                    page.raw("<li>")
                    page.link(frame.paths.room(room.id), room.name ?? "Room")
                    // Its size and area, where its outline reads.
                    if let drawn = drawing.rooms.first(where: { $0.id == room.id }) {
                        page.element("<span class=\"measure\">", RoomMeasure(drawn.points).summary(in: frame.units), "</span>")
                    }
                    page.raw("</li>")
                }
                page.raw("</ul>")
                page.element("<p class=\"total\">", "Floor area \(RoomMeasure.area(drawing.totalArea, in: frame.units))", "</p>")
                writeUnitsSwitch(&page, frame.units)
            }
            let loose = floor.panoramas.filter { $0.roomId == nil }
            if !loose.isEmpty {
                page.raw("<h2>Panoramas without a room</h2>")
                writePanoramas(&page, loose, TourWalk(tour), frame.paths, width: widths.thumbnail)
            }
        }
    }

    /// One room: its panoramas as previews, each opening the viewer.
    public static func room(_ frame: PageFrame, _ tour: TourDocument, roomId: String, widths: PreviewWidths) -> [UInt8]? {
        guard let (floor, room) = find(room: roomId, in: tour) else { return nil }
        let title = room.name ?? "Room"
        var trail = crumbs(frame, tour, upTo: .property)
        trail.append(Crumb(label: FloorTitle.of(number: floor.floor.number, name: floor.floor.name), url: frame.paths.floor(floor.floor.id)))
        return Layout.page(frame, title: title, crumbs: trail) { page in
            page.element("<h1>", title, "</h1>")
            let panoramas = floor.panoramas.filter { $0.roomId == roomId }
            if panoramas.isEmpty {
                page.raw("<p class=\"empty\">No panoramas of this room yet.</p>")
            } else {
                writePanoramas(&page, panoramas, TourWalk(tour), frame.paths, width: widths.thumbnail)
            }
        }
    }

    /// The 360° viewer of one panorama; the plain image where WebGL is missing. A panorama the
    /// server could not read (`readable` false: an image it cannot decode or that is over its
    /// budgets) is said to be so, instead of a grey box to look around in (the signed-in app
    /// offers its original to download; a share link no image at all).
    /// Titled by its room and its place there; the ways on (`TourWalk`) as links, those whose
    /// direction is known placed in the view by the script; previous and next through the
    /// tour; the floor's plan as a minimap with the panoramas whose position is known.
    public static func panorama(_ frame: PageFrame, _ tour: TourDocument, panoramaId: String, widths: PreviewWidths,
                                readable: Bool = true, tiles: ViewerTiles? = nil) -> [UInt8]? {
        let walk = TourWalk(tour)
        guard let index = walk.index(of: panoramaId) else { return nil }
        return walkPage(frame, tour, walk, at: index, widths: widths, readable: readable, tiles: tiles, start: nil)
    }

    /// The panorama a share link opens on: the one the tenant chose for the cover, when it is
    /// one of the tour's, else the walk's first; nil when the tour has none.
    public static func coverPanorama(of tour: TourDocument) -> String? {
        let walk = TourWalk(tour)
        guard let first = walk.stops.first else { return nil }
        return PublicMetadata.cover(tour.property.metadata).flatMap(walk.index(of:)).map { walk.stops[$0].panorama.id } ?? first.panorama.id
    }

    /// A share link's first page, as the people it is sent to see it: its cover panorama
    /// (`coverPanorama`) in the view, titled by the property's name, with the metadata the tenant
    /// marked public and the floors with their rooms (each a way to its first panorama) in the
    /// panel; no ids, revisions, sizes or tenant. A tour without panoramas has its list alone.
    public static func shareStart(_ frame: PageFrame, _ tour: TourDocument, status: ServerStatusDocument, widths: PreviewWidths,
                                  readable: Bool = true, tiles: ViewerTiles? = nil) -> [UInt8] {
        let walk = TourWalk(tour)
        guard let id = coverPanorama(of: tour), let index = walk.index(of: id),
              let page = walkPage(frame, tour, walk, at: index, widths: widths, readable: readable, tiles: tiles, start: status) else {
            return visitorProperty(frame, tour, status: status)
        }
        return page
    }

    /// A panorama's page: the view full size with its title over it, the steps through the tour,
    /// and the panel (the ways on, the plan with its dollhouse, the floors) over the view, or
    /// below it where the page has no script. `start`: the share link's first page, titled by the
    /// property, its panel opening with what a visitor reads first.
    private static func walkPage(_ frame: PageFrame, _ tour: TourDocument, _ walk: TourWalk, at index: Int, widths: PreviewWidths,
                                 readable: Bool, tiles: ViewerTiles?, start status: ServerStatusDocument?) -> [UInt8]? {
        let stop = walk.stops[index]
        let (floor, panorama) = (stop.floor, stop.panorama)
        var trail: [Crumb] = []
        if status == nil {
            trail = crumbs(frame, tour, upTo: .property)
            trail.append(Crumb(label: FloorTitle.of(number: floor.floor.number, name: floor.floor.name), url: frame.paths.floor(floor.floor.id)))
            if let room = stop.room {
                trail.append(Crumb(label: room.name ?? "Room", url: frame.paths.room(room.id)))
            }
        }
        let title = status == nil ? stop.title : tour.property.name
        return Layout.page(frame, title: title, script: readable, immersive: true) { page in
            page.raw("<div class=\"heading\">")
            Layout.writeCrumbs(&page, trail)
            page.element("<h1>", title, "</h1>")
            if status != nil { page.element("<p class=\"place\">", stop.title, "</p>") }
            page.raw("</div>")
            writeViewer(&page, panorama, frame.paths, widths, readable: readable, tiles: tiles, cameraHeight: frame.panoramaHeight)
            writeSteps(&page, walk, from: index, frame.paths)
            writePanel(&page, titled: "Plan and rooms") { page in
                // The plan first: its cone turns with the view, in sight.
                writeMinimap(&page, walk, at: index, frame.paths, units: frame.units, photoWidth: min(widths.cover, widths.viewer),
                             cameraHeight: frame.panoramaHeight)
                writeFloorPlanLink(&page, tour, frame)
                if let status { writeAbout(&page, tour, walk, status: status, frame.paths) }
                writeContact(&page, frame)
                writeWays(&page, walk, from: index, frame.paths)
                page.raw("<p class=\"meta\">Taken ")
                page.text(Format.time(panorama.createdAt))
                // A share link that offers it links the full-size image made again, without the
                // camera's metadata (none of an image it could not read).
                if frame.paths.isShare {
                    if readable && frame.offersOriginals {
                        page.raw(" · ")
                        page.link(frame.paths.image(panorama.id), "Full-size image")
                    }
                } else {
                    page.raw(" · ")
                    page.text(Format.bytes(panorama.size))
                    page.raw(" · ")
                    page.link(frame.paths.image(panorama.id), "Original image")
                }
                page.raw("</p>")
            }
        }
    }

    /// The switch between metres and feet beside a plan's measurements: each a link to the
    /// page in those units, which keeps the visitor's choice for the pages after (a cookie); the
    /// tenant's units until then.
    private static func writeUnitsSwitch(_ page: inout HTMLWriter, _ units: MeasureUnits) {
        page.raw("<p class=\"units\">Units ")
        for (choice, name) in [(MeasureUnits.metric, "Metres"), (.imperial, "Feet")] {
            page.raw(choice == units ? "<a aria-current=\"true\" href=\"?units=" : "<a href=\"?units=")
            page.text(choice.rawValue)
            page.raw("\">")
            page.text(name)
            page.raw("</a>")
        }
        page.raw("</p>")
    }

    /// A branded link's contact lines (its brand's name over them).
    /// The property page's downloads of its published floor plans: the home's PDF, and each
    /// floor's PDF, SVG and PNG; branded, and unbranded for listing sites. None without rooms.
    private static func writeFloorPlanDownloads(_ page: inout HTMLWriter, _ tour: TourDocument, _ paths: ViewerPaths) {
        let planned = tour.floors.filter { !$0.floor.rooms.isEmpty }
        guard !planned.isEmpty else { return }
        let unbranded = "?branding=unbranded"
        page.raw("<section class=\"card floor-plans\"><h2>Floor plans</h2><p>All floors: ")
        page.raw("<a download href=\"")
        page.text(paths.floorPlans(property: tour.property.id))
        page.raw("\">PDF</a> · <a download href=\"")
        page.text(paths.floorPlans(property: tour.property.id) + unbranded)
        page.raw("\">PDF, unbranded</a></p><ul class=\"downloads\">")
        for floor in planned {
            page.raw("<li>")
            page.text(FloorTitle.of(number: floor.floor.number, name: floor.floor.name) + ": ")
            for (index, format) in FloorPlanFormat.allCases.enumerated() {
                if index > 0 { page.raw(" · ") }
                page.raw("<a download href=\"")
                page.text(paths.floorPlan(floor: floor.floor.id, format))
                page.raw("\">")
                page.text(format.rawValue.uppercased())
                page.raw("</a>")
            }
            page.raw(" · <a download href=\"")
            page.text(paths.floorPlan(floor: floor.floor.id, .pdf) + unbranded)
            page.raw("\">PDF, unbranded</a></li>")
        }
        page.raw("</ul><p class=\"meta\">Drawn from the capture's plan, in your units: each room's size and area, the floor's, a scale bar. ")
        page.raw("Branded with your logo, name and contact; unbranded with none of them, nor the platform's, for listing sites.</p></section>")
    }

    /// A share link that offers them: the home's floor plans to download, as the link is branded.
    private static func writeFloorPlanLink(_ page: inout HTMLWriter, _ tour: TourDocument, _ frame: PageFrame) {
        guard frame.paths.isShare, frame.offersFloorPlans, tour.floors.contains(where: { !$0.floor.rooms.isEmpty }) else { return }
        page.raw("<p class=\"download\"><a download href=\"")
        page.text(frame.paths.floorPlans(property: tour.property.id))
        page.raw("\">Download the floor plan</a> (PDF)</p>")
    }

    private static func writeContact(_ page: inout HTMLWriter, _ frame: PageFrame) {
        guard let brand = frame.brand, !brand.contact.isEmpty else { return }
        page.raw("<section class=\"card contact\"><h2>Contact</h2><address>")
        if let name = brand.name { page.element("<strong>", name, "</strong><br>") }
        for (index, line) in brand.contact.enumerated() {
            if index > 0 { page.raw("<br>") }
            page.text(line)
        }
        page.raw("</address></section>")
    }

    /// The panel over the view (below it without scripts); its button, which the script shows, folds it.
    private static func writePanel(_ page: inout HTMLWriter, titled title: StaticString, _ body: (inout HTMLWriter) -> Void) {
        page.raw("<div class=\"around\" id=\"around\"><button type=\"button\" class=\"panel hidden\" aria-expanded=\"true\" aria-controls=\"panel\">")
        page.raw(title)
        page.raw("</button><div class=\"panel-body\" id=\"panel\">")
        body(&page)
        page.raw("</div></div>")
    }

    /// The metadata the tenant marked public, and the tour's size.
    private static func writeFacts(_ page: inout HTMLWriter, _ tour: TourDocument, status: ServerStatusDocument) {
        let facts = PublicMetadata.facts(tour.property.metadata)
        if !facts.isEmpty {
            page.raw("<dl class=\"facts\">")
            for fact in facts {
                page.element("<dt>", fact.label, "</dt>")
                page.element("<dd>", fact.value, "</dd>")
            }
            page.raw("</dl>")
        }
        page.element("<p class=\"status\">", [Format.count(status.floorCount, "floor", "floors"), Format.count(status.roomCount, "room", "rooms"),
                                               Format.count(status.panoramaCount, "panorama", "panoramas")].joined(separator: " · "), "</p>")
    }

    /// What a share link's visitor reads first: the public facts, the tour's size, and each
    /// floor's rooms, each a way to the room's first panorama.
    private static func writeAbout(_ page: inout HTMLWriter, _ tour: TourDocument, _ walk: TourWalk, status: ServerStatusDocument, _ paths: ViewerPaths) {
        page.raw("<section class=\"card about\"><h2>About this home</h2>")
        writeFacts(&page, tour, status: status)
        var seen = Set<String>()
        for (index, stop) in walk.stops.enumerated() where seen.insert(stop.floor.floor.id).inserted {
            page.element("<h3>", FloorTitle.of(number: stop.floor.floor.number, name: stop.floor.floor.name), "</h3>")
            page.raw("<ul class=\"rooms\">")
            // Each room's first panorama in walk order; the floor's panoramas without a room as one.
            var named = Set<String>()
            for other in walk.stops[index...] where other.floor.floor.id == stop.floor.floor.id {
                let name = other.room.map { $0.name ?? "Room" } ?? FloorTitle.of(number: other.floor.floor.number, name: other.floor.floor.name)
                guard named.insert(other.room?.id ?? "").inserted else { continue }
                page.raw("<li>")
                page.link(paths.panorama(other.panorama.id), name)
                page.raw("</li>")
            }
            page.raw("</ul>")
        }
        page.raw("</section>")
    }

    /// The 360° view of a panorama (its heading for the minimap's cone), or why it cannot be shown.
    /// The view starts from a small preview and says what sharpens it: the largest preview
    /// (`data-full`), or the panorama's tiles.
    private static func writeViewer(_ page: inout HTMLWriter, _ panorama: PanoramaDocument, _ paths: ViewerPaths, _ widths: PreviewWidths,
                                    readable: Bool, tiles: ViewerTiles?, cameraHeight: Double) {
        if readable {
            page.raw("<div class=\"viewer\" id=\"viewer\" data-panorama=\"")
            page.text(panorama.id)
            page.raw("\"")
            if let heading = panorama.heading {
                page.raw(" data-heading=\"")
                page.text(Numerals.decimal(heading, places: 1))
                page.raw("\"")
            }
            // How high the camera stood: the markers on the floor stand that far below the horizon's eye.
            page.raw(" data-height=\"")
            page.text(Numerals.decimal(panorama.position?.height ?? cameraHeight, places: 2))
            page.raw("\"")
            if tiles == nil && widths.viewer > widths.cover {
                // Drawn from the small preview at once, then from this one once it has come.
                page.raw(" data-full=\"")
                page.text(paths.preview(panorama.id, width: widths.viewer))
                page.raw("\"")
            }
            if let tiles {
                page.raw(" data-tiles=\"")
                page.text(paths.tiles(panorama.id))
                for (name, value) in [("face-size", tiles.faceSize), ("levels", tiles.levels), ("tile-size", tiles.tileSize)] {
                    page.raw("\" data-")
                    page.text(name)
                    page.raw("=\"")
                    page.text(String(value))
                }
                page.raw("\"")
            }
            page.raw("><canvas class=\"hidden\" tabindex=\"0\" aria-label=\"360° view: drag or use the arrow keys to look around, the wheel to zoom\"></canvas>")
            page.raw("<img class=\"fallback\" alt=\"The panorama as a flat image\" src=\"")
            page.text(paths.preview(panorama.id, width: min(widths.cover, widths.viewer)))
            page.raw("\"><div class=\"hotspots\"></div></div>")
            // Beside the view, not in it: each gets a place of its own in the page's layout
            // (full screen takes the whole page, so they stay in sight there too).
            page.raw("<div class=\"controls\" id=\"view-controls\"><p class=\"hint hidden\" role=\"note\"><span class=\"fine\">Drag to look around · arrow keys turn, + and − zoom</span>")
            page.raw("<span class=\"coarse\">Drag to look around · pinch to zoom</span></p>")
            page.raw("<button type=\"button\" class=\"motion hidden\" aria-pressed=\"false\">Look by moving the phone</button>")
            page.raw("<button type=\"button\" class=\"play hidden\" aria-pressed=\"false\">Play the tour</button>")
            page.raw("<button type=\"button\" class=\"fullscreen hidden\" aria-pressed=\"false\">Full screen</button></div>")
        } else {
            page.raw("<section class=\"card unreadable\" role=\"status\"><h2>This panorama could not be read</h2><p>")
            page.text("Its image is damaged, or larger than this server draws, so it cannot be shown here.")
            // The embed form has no download (the whole tour, a link away, has); a share link
            // offers no original (nothing else of this image could be made).
            page.raw(paths.isShare ? "</p></section>" : " The original image can still be downloaded.</p></section>")
        }
    }

    /// The id of the panorama a walk of `tour` starts at; nil when it has none.
    public static func firstPanorama(of tour: TourDocument) -> String? {
        TourWalk(tour).stops.first?.panorama.id
    }

    /// A share link's embed form of a panorama, for another site's frame: the view with its
    /// hotspots, its title, the steps and the ways on (each to its embed form), and a link to
    /// the whole tour; no bar, trail, minimap or image download.
    public static func embed(_ frame: PageFrame, _ tour: TourDocument, panoramaId: String, widths: PreviewWidths, readable: Bool = true,
                             tiles: ViewerTiles? = nil) -> [UInt8]? {
        let walk = TourWalk(tour)
        guard let index = walk.index(of: panoramaId) else { return nil }
        let stop = walk.stops[index]
        var embedded = frame
        embedded.paths = frame.paths.embedded
        let paths = embedded.paths
        return Layout.embed(title: stop.title, embedded) { page in
            page.raw("<div class=\"heading\">")
            page.element("<h1>", stop.title, "</h1>")
            page.raw("</div>")
            writeViewer(&page, stop.panorama, paths, widths, readable: readable, tiles: tiles, cameraHeight: frame.panoramaHeight)
            writeSteps(&page, walk, from: index, paths)
            writePanel(&page, titled: "Ways on") { page in
                writeWays(&page, walk, from: index, paths)
                page.raw("<p class=\"meta\"><a href=\"")
                page.text(paths.property(tour.property.id))
                page.raw("\" target=\"_blank\" rel=\"noopener\">Open the whole tour</a></p>")
            }
            // The plan and the places on it, for moves through the room (no dollhouse here).
            if let house = Dollhouse(walk, at: index, paths, units: frame.units, photoWidth: min(widths.cover, widths.viewer), cameraHeight: frame.panoramaHeight) {
                page.raw("<div class=\"house\" hidden data-house=\"")
                page.text(house.json)
                page.raw("\"></div>")
            }
        }
    }

    /// Previous and next through the tour (across floors: the next floor's name says so).
    private static func writeSteps(_ page: inout HTMLWriter, _ walk: TourWalk, from index: Int, _ paths: ViewerPaths) {
        page.raw("<nav class=\"walk\" aria-label=\"Previous and next panorama\">")
        for (step, forward) in [(index - 1, false), (index + 1, true)] {
            guard walk.stops.indices.contains(step) else {
                page.raw("<span class=\"end\"></span>")
                continue
            }
            let target = walk.stops[step]
            page.raw(forward ? "<a rel=\"next\" href=\"" : "<a rel=\"prev\" href=\"")
            page.text(paths.panorama(target.panorama.id))
            page.raw("\">")
            let floorChanges = target.floor.floor.id != walk.stops[index].floor.floor.id
            let label = (floorChanges ? FloorTitle.of(number: target.floor.floor.number, name: target.floor.floor.name) + " · " : "") + target.title
            page.text(forward ? "\(label) →" : "← \(label)")
            page.raw("</a>")
        }
        page.raw("</nav>")
    }

    /// The ways on from here, each a link; one whose direction is known carries it
    /// (`data-longitude`, and `data-distance` in metres) for the script to place in the view
    /// as a marker on the floor, and says it in words.
    private static func writeWays(_ page: inout HTMLWriter, _ walk: TourWalk, from index: Int, _ paths: ViewerPaths) {
        let links = walk.links(from: index)
        guard !links.isEmpty else { return }
        page.raw("<section class=\"card ways\"><h2>From here</h2><ul class=\"links\">")
        for link in links {
            page.raw("<li><a href=\"")
            page.text(paths.panorama(walk.stops[link.target].panorama.id))
            page.raw("\"")
            if let longitude = link.longitude {
                page.raw(" data-longitude=\"")
                page.text(Numerals.decimal(longitude, places: 1))
                page.raw("\"")
            }
            if let distance = link.distance {
                page.raw(" data-distance=\"")
                page.text(Numerals.decimal(distance, places: 2))
                page.raw("\"")
            }
            page.raw(">")
            page.text(walk.stops[link.target].title)
            page.raw("</a>")
            if let longitude = link.longitude {
                page.element("<span class=\"direction\">", Direction.words(longitude), "</span>")
            }
            page.raw("</li>")
        }
        page.raw("</ul></section>")
    }

    /// The floor's plan, small: a dot for each panorama whose position is known (a link to it),
    /// this one's with the cone of the view; and the other floors, each a link to its first panorama.
    private static func writeMinimap(_ page: inout HTMLWriter, _ walk: TourWalk, at index: Int, _ paths: ViewerPaths, units: MeasureUnits, photoWidth: Int,
                                     cameraHeight: Double) {
        let here = walk.stops[index]
        let drawing = FloorPlanDrawing(here.floor.floor.rooms)
        let floors = walk.stops.indices.filter { $0 == 0 || walk.stops[$0].floor.floor.id != walk.stops[$0 - 1].floor.floor.id }
        guard !drawing.rooms.isEmpty || floors.count > 1 else { return }
        page.raw("<section class=\"card minimap\" aria-label=\"Where you stand\">")
        if !drawing.rooms.isEmpty {
            let marks = walk.stops.indices.compactMap { other -> FloorPlanDrawing.Mark? in
                let stop = walk.stops[other]
                guard stop.floor.floor.id == here.floor.floor.id, let position = stop.panorama.position else { return nil }
                return FloorPlanDrawing.Mark(position: position, heading: stop.panorama.heading, url: paths.panorama(stop.panorama.id), label: stop.title, current: other == index)
            }
            drawing.write(into: &page, roomURL: { paths.room($0) }, marks: marks, units: units, look: .panel)
            // Each room's size and area, then the floor's.
            page.raw("<ul class=\"sizes\">")
            for room in drawing.rooms {
                page.element("<li>", room.name, "")
                page.element(" <span class=\"measure\">", RoomMeasure(room.points).summary(in: units), "</span></li>")
            }
            page.raw("</ul>")
            page.element("<p class=\"total\">", "Floor area \(RoomMeasure.area(drawing.totalArea, in: units))", "</p>")
            writeUnitsSwitch(&page, units)
        }
        if floors.count > 1 {
            page.raw("<nav class=\"floors\" aria-label=\"Floors\"><ul>")
            for first in floors {
                let floor = walk.stops[first].floor.floor
                page.raw("<li><a href=\"")
                page.text(paths.panorama(walk.stops[first].panorama.id))
                page.raw(floor.id == here.floor.floor.id ? "\" aria-current=\"page\">" : "\">")
                page.text(FloorTitle.of(number: floor.number, name: floor.name))
                page.raw("</a></li>")
            }
            page.raw("</ul></nav>")
        }
        // The whole house in 3D, drawn by the script (which shows the button where WebGL is).
        if let house = Dollhouse(walk, at: index, paths, units: units, photoWidth: photoWidth, cameraHeight: cameraHeight) {
            page.raw("<button type=\"button\" class=\"dollhouse hidden\" data-house=\"")
            page.text(house.json)
            page.raw("\">Dollhouse</button>")
        }
        page.raw("</section>")
    }

    /// An error as a page: what went wrong, and the way back.
    public static func error(_ frame: PageFrame, title: String, message: String) -> [UInt8] {
        Layout.page(frame, title: title) { page in
            page.raw("<section class=\"card narrow\">")
            page.element("<h1>", title, "</h1>")
            page.element("<p>", message, "</p>")
            if !frame.paths.isShare { page.link(ViewerPaths.list, "Back to the properties") }
            page.raw("</section>")
        }
    }

    /// Previews, each named by its room and place as the walk names it ("Kitchen · 1 of 2"),
    /// then when it was taken.
    private static func writePanoramas(_ page: inout HTMLWriter, _ panoramas: [PanoramaDocument], _ walk: TourWalk, _ paths: ViewerPaths, width: Int) {
        page.raw("<ul class=\"panoramas\">")
        for panorama in panoramas {
            let name = walk.index(of: panorama.id).map { walk.stops[$0].title } ?? "Panorama"
            page.raw("<li><a href=\"")
            page.text(paths.panorama(panorama.id))
            page.raw("\"><img loading=\"lazy\" alt=\"")
            page.text(name)
            page.raw("\" width=\"")
            page.text(width)
            page.raw("\" height=\"")
            page.text(width / 2)
            page.raw("\" src=\"")
            page.text(paths.preview(panorama.id, width: width))
            page.raw("\"><span class=\"name\">")
            page.text(name)
            page.raw("</span> <span class=\"taken\">taken ")
            page.text(Format.time(panorama.createdAt))
            page.raw("</span></a></li>")
        }
        page.raw("</ul>")
    }

    private enum Depth { case list, property }

    /// The trail down to the property (and the list above it, in the app).
    private static func crumbs(_ frame: PageFrame, _ tour: TourDocument, upTo depth: Depth) -> [Crumb] {
        var trail: [Crumb] = []
        if !frame.paths.isShare { trail.append(Crumb(label: "Properties", url: ViewerPaths.list)) }
        if depth == .property { trail.append(Crumb(label: tour.property.name, url: frame.paths.property(tour.property.id))) }
        return trail
    }

    static func find(room roomId: String, in tour: TourDocument) -> (TourDocument.Floor, RoomDocument)? {
        for floor in tour.floors {
            if let room = floor.floor.rooms.first(where: { $0.id == roomId }) { return (floor, room) }
        }
        return nil
    }
}

/// A share link's lifetime in words: "1 hour", "7 days".
enum Lifetime {
    static func describe(_ seconds: Int) -> String {
        if seconds % 86_400 == 0 { return Format.count(seconds / 86_400, "day", "days") }
        if seconds % 3600 == 0 { return Format.count(seconds / 3600, "hour", "hours") }
        if seconds % 60 == 0 { return Format.count(seconds / 60, "minute", "minutes") }
        return Format.count(seconds, "second", "seconds")
    }
}

/// Percent-encoding of a query value (RFC 3986 §2.1: everything but unreserved characters).
enum URLComponent {
    static func encode(_ value: String) -> String {
        var result = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                result += "%"
                result.unicodeScalars.append(hex[Int(byte >> 4)])
                result.unicodeScalars.append(hex[Int(byte & 0xf)])
            }
        }
        return result
    }
}
