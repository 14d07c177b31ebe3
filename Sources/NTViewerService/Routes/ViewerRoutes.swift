import NTAPIModel
import NTFloorPlans
import NTHashing
import NTHTTPCore
import NTImagePreviews
import NTLogging
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTSQLKit
import NTTourUseCases
import NTTourViewer

/// What the viewer's pages use: the tours' reads, share links, branding, sessions and the
/// sign-in limit, the panoramas' images and files, and the viewer's section of the settings.
package struct ViewerService: Sendable {
    package let reads: ViewerReads
    package let panoramas: Panoramas
    package let shares: Shares
    package let branding: Branding
    package let sessions: ViewerSessions
    package let signIns: SignInLimiter
    package let images: PanoramaImages
    package let imageAnswers: ImageAnswers
    package let contents: ContentAnswers
    package let floorPlans: FloorPlans
    package let logger: Logger
    package let settings: ViewerSettings

    package init(reads: ViewerReads, panoramas: Panoramas, shares: Shares, branding: Branding, sessions: ViewerSessions, signIns: SignInLimiter, images: PanoramaImages, imageAnswers: ImageAnswers, contents: ContentAnswers, floorPlans: FloorPlans, logger: Logger, settings: ViewerSettings) {
        self.reads = reads
        self.panoramas = panoramas
        self.shares = shares
        self.branding = branding
        self.sessions = sessions
        self.signIns = signIns
        self.images = images
        self.imageAnswers = imageAnswers
        self.contents = contents
        self.floorPlans = floorPlans
        self.logger = logger
        self.settings = settings
    }
}

/// The tour viewer: the seed's screens as pages under /app (signed in with a tenant token) and
/// under /t/{secret} (one tour, through a share link), their images, and their static files.
package enum ViewerRoutes {
    /// `errors`: the service's errors (storage failures as the service answers them), inside
    /// the viewer's own (as pages).
    package static func add(to table: inout RouteTable, _ viewer: ViewerService, errors: ServiceErrors) {
        for asset in ViewerAssets.all {
            table.add(.get, asset.path, headers: ViewerResponses.asset, inline: true) { _ in
                Response(status: .ok, contentType: asset.contentType, body: .bytes(asset.bytes))
            }
        }
        let formLimit = Int64(viewer.settings.maxFormBodyBytes)
        let signIn = SignIn(viewer: viewer)
        let (sessions, shares) = (SessionAuthentication(sessions: viewer.sessions, settings: viewer.settings),
                                  ShareAuthentication(shares: viewer.shares, settings: viewer.settings))
        let platformName = viewer.settings.sharePlatformName
        table.group(ViewerErrors(logger: viewer.logger, shared: false), errors) { table in
            table.add(.get, "/app", headers: ViewerResponses.page, inline: true) { _ in .seeOther(ViewerPaths.list) }
            table.add(.get, ViewerPaths.signIn, headers: ViewerResponses.page) { request in try await signIn.form(request) }
            table.add(.post, ViewerPaths.signIn, bodyLimit: formLimit, headers: ViewerResponses.page) { request in try await signIn.submit(request) }
            var app = RouteGroup<SignedIn>(table, authenticate: sessions.authenticate)
            app.add(.post, ViewerPaths.signOut, bodyLimit: formLimit, headers: ViewerResponses.page) { signedIn, request in try await signIn.signOut(signedIn, request) }
            app.add(.get, ViewerPaths.list, headers: ViewerResponses.page) { signedIn, request in try await propertyList(signedIn.scope, request, viewer) }
            addPages(to: &app, prefix: "/app", viewer)
            app.add(.get, "/app/properties/{id}", headers: ViewerResponses.page) { signedIn, request in
                try await page(.property(try request.uuid("id")), signedIn.scope, request, viewer)
            }
            // The agent's downloads of the home's published floor plans (`?branding=unbranded`).
            app.add(.get, "/app/properties/{id}/floor-plan.pdf", headers: ViewerResponses.security) { signedIn, request in
                let ask = FloorPlanAsk.home(propertyId: try request.uuid("id"))
                return .floorPlan(try await viewer.floorPlans.plan(signedIn.scope.tenant, ask, branded: try GetFloorPlan.branded(request)), for: request)
            }
            for format in FloorPlanFormat.allCases {
                let parse = GetFloorPlan.floor(suffix: format, parameter: "id")
                app.add(.get, "/app/floors/{id}/floor-plan.\(format.rawValue)", headers: ViewerResponses.security) { signedIn, request in
                    let command = try parse(request)
                    return .floorPlan(try await viewer.floorPlans.plan(signedIn.scope.tenant, command.ask, branded: command.branded), for: request)
                }
            }
            app.add(.post, "/app/properties/{id}/shares", bodyLimit: formLimit, headers: ViewerResponses.page) { signedIn, request in
                try await makeShare(signedIn, request, viewer)
            }
            app.add(.post, "/app/shares/{id}/revoke", bodyLimit: formLimit, headers: ViewerResponses.page) { signedIn, request in
                let (tenant, id) = (signedIn.scope.tenant, try request.uuid("id"))
                _ = try await checkedForm(signedIn, request)
                guard let property = try await viewer.shares.revoke(tenant, id) else {
                    throw ServiceError.notFound("share link", id)
                }
                return .seeOther(ViewerPaths.app.property(property))
            }
            table = app.table
        }
        table.group(ViewerErrors(logger: viewer.logger, shared: true, sharePlatformName: platformName), errors) { table in
            var link = RouteGroup<ShareVisitor>(table, authenticate: shares.authenticate)
            link.add(.get, "/t/{secret}", headers: ViewerResponses.page, secretPath: true) { visitor, request in
                try await page(.property(visitor.share.propertyId), try await visited(visitor, request, viewer), request, viewer)
            }
            addPages(to: &link, prefix: "/t/{secret}", viewer)
            // The picture chats and listings show of the link (`LinkPreview`).
            link.add(.get, "/t/{secret}/card.jpg", headers: ViewerResponses.security, secretPath: true) { visitor, request in
                try await linkPicture(visitor, request, viewer)
            }
            // The floor plans of a link that offers them, branded as the link is; none once it
            // is revoked or expired (its secret opens nothing then).
            link.add(.get, "/t/{secret}/floor-plan.pdf", headers: ViewerResponses.security, secretPath: true) { visitor, request in
                guard visitor.share.offersFloorPlans else {
                    throw ServiceError(.forbidden, "This share link offers the tour's views, not its floor plans.")
                }
                let plan = try await viewer.floorPlans.plan(visitor.scope.tenant, .home(propertyId: visitor.share.propertyId), branded: visitor.share.branded,
                                                            within: visitor.share.propertyId)
                return .floorPlan(plan, for: request)
            }
            // A branded link's logo and accent; an unbranded link has neither.
            link.add(.get, "/t/{secret}/logo", headers: ViewerResponses.security, secretPath: true) { visitor, request in
                guard visitor.share.branded, let logo = try await viewer.branding.logo(visitor.scope.tenant) else {
                    throw ServiceError.notFound("logo", "")
                }
                return .logo(logo.jpeg, updatedAt: logo.updatedAt, for: request)
            }
            link.add(.get, "/t/{secret}/brand.css", headers: ViewerResponses.security, secretPath: true) { visitor, _ in
                guard visitor.share.branded, let accent = try await viewer.branding.branding(visitor.scope.tenant).accent else {
                    throw ServiceError.notFound("style sheet", "")
                }
                return Response(status: .ok, contentType: "text/css; charset=utf-8", headers: [HTTPField(name: "Cache-Control", value: "private, no-cache")],
                                body: .bytes(PageBrand.styleSheet(accent: accent)))
            }
            table = link.table
        }
        // The viewer's beacons: JSON errors, as the API's.
        table.group(errors) { table in
            var link = RouteGroup<ShareVisitor>(table, authenticate: shares.authenticate)
            link.add(.post, "/t/{secret}/visits/{visitId}", bodyLimit: 1024, headers: ViewerResponses.security, secretPath: true) { visitor, request in
                try await recordBeacon(visitor, request, viewer)
            }
            table = link.table
        }
        // The embed form: framed by the sites its share names (its answers set the policy), so
        // apart from the other pages, whose routes frame them nowhere.
        table.group(ViewerErrors(logger: viewer.logger, shared: true, sharePlatformName: platformName, embedded: true), errors) { table in
            var link = RouteGroup<ShareVisitor>(table, authenticate: shares.authenticate)
            link.add(.get, "/t/{secret}" + ViewerPaths.embedSuffix, headers: ViewerResponses.embed, secretPath: true) { visitor, request in
                try await page(.embed(.start(visitor.share.propertyId)), try await visited(visitor, request, viewer), request, viewer)
            }
            link.add(.get, "/t/{secret}" + ViewerPaths.embedSuffix + "/panoramas/{id}", headers: ViewerResponses.embed, secretPath: true) { visitor, request in
                try await page(.embed(.panorama(try request.uuid("id"))), visitor.scope, request, viewer)
            }
            table = link.table
        }
    }

    /// The pages and images both views have, under `prefix`.
    private static func addPages<P: ViewerPrincipal>(to group: inout RouteGroup<P>, prefix: String, _ viewer: ViewerService) {
        let secret = prefix.contains("{secret}")
        group.add(.get, prefix + "/floors/{id}", headers: ViewerResponses.page, secretPath: secret) { principal, request in
            try await page(.floor(try request.uuid("id")), principal.scope, request, viewer)
        }
        group.add(.get, prefix + "/rooms/{id}", headers: ViewerResponses.page, secretPath: secret) { principal, request in
            try await page(.room(try request.uuid("id")), principal.scope, request, viewer)
        }
        group.add(.get, prefix + "/panoramas/{id}", headers: ViewerResponses.page, secretPath: secret) { principal, request in
            try await page(.panorama(try request.uuid("id")), principal.scope, request, viewer)
        }
        group.add(.get, prefix + "/panoramas/{id}/preview", headers: ViewerResponses.security, secretPath: secret) { principal, request in
            let (scope, panorama) = try await scopedPanorama(principal.scope, request, viewer)
            // Revalidated on every view (a 304 when unchanged): a revoked link shows nothing more.
            return try await viewer.imageAnswers.preview(scope.tenant, panorama, for: request, cacheControl: "private, no-cache")
        }
        group.add(.get, prefix + "/panoramas/{id}/tiles/{level}/{tile}", headers: ViewerResponses.security, secretPath: secret) { principal, request in
            let (scope, panorama) = try await scopedPanorama(principal.scope, request, viewer)
            return try await viewer.imageAnswers.tile(scope.tenant, panorama, level: request.parameter("level") ?? "", name: request.parameter("tile") ?? "", for: request)
        }
        group.add(.get, prefix + "/panoramas/{id}/image", headers: ViewerResponses.security, secretPath: secret) { principal, request in
            let (scope, panorama) = try await scopedPanorama(principal.scope, request, viewer)
            // Through a share link that offers it, the full-size image is the largest preview,
            // made again from the pixels: none of the camera's metadata (GPS position, device
            // serial, owner) reaches a visitor. The signed-in tenant gets its original.
            if scope.property != nil {
                guard scope.frame.offersOriginals else {
                    throw ServiceError(.forbidden, "This share link offers the tour's views, not its full-size images.")
                }
                return try await viewer.imageAnswers.preview(scope.tenant, panorama, for: request, cacheControl: "private, no-cache", largest: true)
            }
            return try await viewer.contents.content(BlobKey(tenant: scope.tenant, kind: .panorama, id: panorama.id),
                                                     StoredContent(size: panorama.size, sha256: panorama.sha256, contentType: panorama.contentType), for: request,
                                                     sender: .toursdOnly)
        }
    }

    /// A share link's opening (its first page, or its embed's): the visit recorded, its
    /// beacon's address on the pages (`PageFrame.visit`). Who the visitor is, is only hashed.
    private static func visited(_ visitor: ShareVisitor, _ request: Request, _ viewer: ViewerService) async throws -> ViewerScope {
        // A HEAD (a link checker's, a preview's probe) is no one looking, nor is a chat app
        // fetching the page to show the link.
        guard request.method != .head, !LinkPreviewFetchers.fetched(userAgent: request.headers["user-agent"]) else { return visitor.scope }
        let share = visitor.share
        let client = VisitorClient(address: ClientAddress.of(peer: request.peerAddress, forwardedFor: request.headers["x-forwarded-for"],
                                                                      trusted: viewer.settings.trustedProxies),
                                            userAgent: request.headers["user-agent"] ?? "")
        // The visitor's page comes first: a visit that cannot be written is logged, not shown.
        let recorded: String?
        do {
            recorded = try await viewer.shares.recordView(share, by: client)
        } catch {
            viewer.logger.warn("a share link's visit was not recorded", ["share": share.id, "error": "\(error)"])
            recorded = nil
        }
        guard let visit = recorded else { return visitor.scope }
        var scope = visitor.scope
        scope.frame.visit = scope.frame.paths.base + "/visits/" + visit
        return scope
    }

    /// A beacon of the viewer: how long a panorama has been shown in a visit.
    private static func recordBeacon(_ visitor: ShareVisitor, _ request: Request, _ viewer: ViewerService) async throws -> Response {
        let (share, visit) = (visitor.share, try request.uuid("visitId"))
        let body = try await request.body.collect(upTo: request.bodyLimit)
        let beacon = try ServiceError.parsing { () throws(InvalidDocument) in try VisitBeacon.parse(body, maxDepth: viewer.settings.maxJsonDepth) }
        switch try await viewer.shares.recordBeacon(share, visit: visit, beacon) {
        case .recorded: return Response(status: .noContent)
        case .noVisit: throw ServiceError.notFound("visit", visit)
        case .noPanorama: throw ServiceError.notFound("panorama", beacon.panoramaId)
        }
    }

    private static func scopedPanorama(_ scope: ViewerScope, _ request: Request, _ viewer: ViewerService) async throws -> (ViewerScope, PanoramaRecord) {
        let id = try request.uuid("id")
        let panorama = try await viewer.panoramas.panorama(scope.tenant, id)
        guard scope.property == nil || scope.property == panorama.propertyId else { throw ServiceError.notFound("panorama", id) }
        return (scope, panorama)
    }

    private enum Page {
        case property(String), floor(String), room(String), panorama(String), embed(Embedded)

        /// What an embed form shows: its tour's first panorama (by the property's id), or one.
        enum Embedded { case start(String), panorama(String) }

        var part: TourPart? {
            switch self {
            case .property, .embed(.start): nil
            case .floor(let id): .floor(id)
            case .room(let id): .room(id)
            case .panorama(let id), .embed(.panorama(let id)): .panorama(id)
            }
        }

        var name: String {
            switch self {
            case .property, .embed(.start): "property"
            case .floor: "floor"
            case .room: "room"
            case .panorama, .embed(.panorama): "panorama"
            }
        }

        var id: String {
            switch self {
            case .property(let id), .floor(let id), .room(let id), .panorama(let id), .embed(.start(let id)), .embed(.panorama(let id)): id
            }
        }
    }

    /// A page of the scope's tenant; another tenant's ids, and anything outside a share
    /// link's property, are 404 as in the API.
    private static func page(_ page: Page, _ scope: ViewerScope, _ request: Request, _ viewer: ViewerService,
                             madeShare: (url: String, embeddable: Bool)? = nil) async throws -> Response {
        let tenant = scope.tenant
        let propertyPage = if case .property = page { true } else { false }
        let data = try await viewer.reads.page(tenant, part: page.part, propertyId: page.id, within: scope.property, propertyPage: propertyPage,
                                               listingShares: scope.frame.csrf != nil)
        guard let data else { throw ServiceError.notFound(page.name, page.id) }
        let widths = PreviewWidths(thumbnail: viewer.previewWidth(near: 640), viewer: viewer.settings.previewWidths.last ?? 1024,
                                   cover: viewer.previewWidth(near: 1280))
        var frame = scope.frame
        frame.units = scope.chosenUnits ?? data.branding.units
        frame.panoramaHeight = viewer.settings.panoramaHeight
        if let share = scope.share, share.branded, !data.branding.isEmpty {
            frame.brand = PageBrand(name: data.branding.name, logo: data.branding.logo.map { _ in frame.paths.base + "/logo" },
                                    style: data.branding.accent.map { _ in frame.paths.base + "/brand.css" }, contact: data.branding.contact)
        }
        let bytes: [UInt8]?
        switch page {
        case .property:
            guard let status = data.status else { throw ServiceError.notFound(page.name, page.id) }
            if frame.paths.isShare, let share = scope.share {
                let cover = ViewerPages.coverPanorama(of: data.tour)
                frame.linkPreview = linkPreview(share, data.tour, brand: frame.brand, picture: cover != nil, frame.paths, request, viewer)
                let shown = if let cover { try await image(cover, in: data.tour, tenant, widths, viewer) } else { (readable: true, tiles: ViewerTiles?.none) }
                bytes = ViewerPages.shareStart(frame, data.tour, status: status, widths: widths, readable: shown.readable, tiles: shown.tiles)
                break
            }
            let shares = data.shares.map { list in
                ShareSection(shares: list.map { share in
                    var shown = share
                    shown.url = share.url.map { viewer.absoluteURL($0, request) }
                    return shown
                }, madeURL: madeShare?.url, madeEmbeddable: madeShare?.embeddable ?? false, lifetimes: viewer.settings.shares.offered,
                             defaultLifetime: viewer.settings.shares.defaultLifetime)
            }
            bytes = ViewerPages.property(frame, data.tour, status: status, shares: shares, widths: widths)
        case .floor(let id): bytes = ViewerPages.floor(frame, data.tour, floorId: id, widths: widths)
        case .room(let id): bytes = ViewerPages.room(frame, data.tour, roomId: id, widths: widths)
        case .panorama(let id):
            let shown = try await image(id, in: data.tour, tenant, widths, viewer)
            bytes = ViewerPages.panorama(frame, data.tour, panoramaId: id, widths: widths, readable: shown.readable, tiles: shown.tiles)
        case .embed(let shown):
            let id: String?
            switch shown {
            case .start: id = ViewerPages.firstPanorama(of: data.tour)
            case .panorama(let panorama): id = panorama
            }
            guard let id else { throw ServiceError(.notFound, "This tour has no panoramas to show yet.") }
            let shown = try await image(id, in: data.tour, tenant, widths, viewer)
            bytes = ViewerPages.embed(frame, data.tour, panoramaId: id, widths: widths, readable: shown.readable, tiles: shown.tiles)
            guard let bytes else { throw ServiceError.notFound(page.name, page.id) }
            return .page(bytes, headers: ViewerResponses.framing(allowing: scope.frameAncestors))
        }
        guard let bytes else { throw ServiceError.notFound(page.name, page.id) }
        return .page(bytes)
    }

    /// What a chat shows of a share link: its label or the property's name, what the tour
    /// holds, the agency only where the link is branded, and the cover's picture.
    private static func linkPreview(_ share: OpenedShare, _ tour: TourDocument, brand: PageBrand?, picture: Bool, _ paths: ViewerPaths,
                                    _ request: Request, _ viewer: ViewerService) -> LinkPreview {
        let panoramas = tour.floors.reduce(0) { $0 + $1.panoramas.count }
        var description = "A 360° tour of \(tour.property.name): "
        description += (tour.floors.count == 1 ? "1 floor" : "\(tour.floors.count) floors") + ", " + (panoramas == 1 ? "1 panorama" : "\(panoramas) panoramas")
        if let agency = brand?.name { description += ", shared by \(agency)" }
        let title = share.label.flatMap { $0.isEmpty ? nil : $0 } ?? tour.property.name
        return LinkPreview(title: title, description: description + ".", url: viewer.absoluteURL(paths.base, request),
                           image: picture ? viewer.absoluteURL(paths.base + "/card.jpg", request) : nil)
    }

    /// The link's picture: its cover panorama's preview `LinkPreview.imageWidth` wide, made
    /// again from the pixels (no EXIF or XMP of the upload goes with it).
    private static func linkPicture(_ visitor: ShareVisitor, _ request: Request, _ viewer: ViewerService) async throws -> Response {
        let scope = visitor.scope
        // The tour alone: the property page's status and links are not needed to find its cover.
        guard let data = try await viewer.reads.page(scope.tenant, part: nil, propertyId: visitor.share.propertyId, within: scope.property,
                                                     propertyPage: false, listingShares: false),
              let cover = ViewerPages.coverPanorama(of: data.tour) else {
            throw ServiceError(.notFound, "This tour has no panoramas to show yet.")
        }
        let panorama = try await viewer.panoramas.panorama(scope.tenant, cover)
        return try await viewer.imageAnswers.preview(scope.tenant, panorama, width: LinkPreview.imageWidth, for: request, cacheControl: "private, no-cache")
    }

    /// How the viewer draws the panorama: from its tiles once they are made (it is readable
    /// then); else whether the server can draw it at all. When too many previews are being
    /// made, it is taken to be: the page still comes, its viewer's image asks again on its own.
    private static func image(_ id: String, in tour: TourDocument, _ tenant: Int64, _ widths: PreviewWidths,
                              _ viewer: ViewerService) async throws -> (readable: Bool, tiles: ViewerTiles?) {
        guard let panorama = tour.floors.flatMap(\.panoramas).first(where: { $0.id == id }) else { return (true, nil) }
        if let pyramid = await viewer.images.pyramid(tenant, panorama) {
            return (true, ViewerTiles(faceSize: pyramid.faceSize, levels: pyramid.levels, tileSize: TilePyramid.tileSize))
        }
        do {
            return (try await viewer.images.isReadable(tenant, panorama, width: widths.viewer), nil)
        } catch let error as StorageError where error.kind == .unavailable {
            return (true, nil)
        }
    }

    private static func propertyList(_ scope: ViewerScope, _ request: Request, _ viewer: ViewerService) async throws -> Response {
        let query = String((try request.queryParameter("q") ?? "").trimmingCharacters(in: .whitespaces).prefix(200))
        let number = try request.queryParameter("page").map { text throws(ServiceError) in
            guard let value = Int(text), (1...100_000).contains(value) else { throw ServiceError.badRequest("page must be 1 to 100000") }
            return value
        } ?? 1
        let pageSize = viewer.settings.pageSize
        let (items, hasNext) = try await viewer.reads.propertyList(scope.tenant, query: query, page: number, pageSize: pageSize)
        return .page(ViewerPages.propertyList(scope.frame, items, query: query, page: number, hasNext: hasNext))
    }

    private static func makeShare(_ signedIn: SignedIn, _ request: Request, _ viewer: ViewerService) async throws -> Response {
        let (tenant, propertyId, shares) = (signedIn.scope.tenant, try request.uuid("id"), viewer.settings.shares)
        let form = try await checkedForm(signedIn, request)
        guard let seconds = form["expiresInSeconds"].flatMap({ Int($0) }), shares.offered.contains(seconds) else {
            throw ServiceError.badRequest("choose one of the offered lifetimes")
        }
        let origins = (form["frameAncestors"] ?? "").split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\n" || $0 == "\r" || $0 == "\t" }).map(String.init)
        // An empty label field is no label; a checkbox is sent only when ticked.
        let label = form["label"].flatMap { DisplayName.trimmed($0).isEmpty ? nil : $0 }
        let input = try ServiceError.parsing { () throws(InvalidDocument) in
            let branding = form["branding"] ?? "branded"
            guard ["branded", "unbranded"].contains(branding) else {
                throw InvalidDocument("branding must be branded or unbranded")
            }
            return try ShareInput(expiresInSeconds: seconds, label: label, frameAncestors: origins, offersOriginals: form["offersOriginals"] != nil,
                                  offersFloorPlans: form["offersFloorPlans"] != nil, branded: branding == "branded")
                .validated(shares.lifetimes, maxOrigins: shares.maxFrameAncestors)
        }
        let share = try await viewer.shares.create(tenant, propertyId: propertyId, input)
        guard let share, let url = share.url else { throw ServiceError.notFound("property", propertyId) }
        return try await page(.property(propertyId), signedIn.scope, request, viewer,
                              madeShare: (viewer.absoluteURL(url, request), !share.frameAncestors.isEmpty))
    }

    /// The form of a signed-in POST, after its CSRF token matched the session's.
    static func checkedForm(_ signedIn: SignedIn, _ request: Request) async throws -> FormFields {
        let form = try FormFields(try await request.body.collect(upTo: request.bodyLimit))
        guard let csrf = form["csrf"], constantTimeEquals(Array(csrf.utf8), Array(signedIn.session.csrf.utf8)) else {
            throw ServiceError(.forbidden, "This form has expired. Go back, reload the page and try again.")
        }
        return form
    }
}

extension ViewerService {
    /// The configured preview width closest to `width`.
    package func previewWidth(near width: Int) -> Int {
        settings.previewWidths.min { abs($0 - width) < abs($1 - width) } ?? width
    }

    /// A path as the URL a browser elsewhere opens: under `publicUrl`, else the Host the
    /// request came to (when it is a plain host name or address).
    package func absoluteURL(_ path: String, _ request: Request) -> String {
        if !settings.publicUrl.isEmpty { return settings.publicUrl + path }
        let host = request.headers["host"] ?? ""
        let plain = !host.isEmpty && host.utf8.count <= 255 && host.unicodeScalars.allSatisfy {
            $0.properties.isASCIIHexDigit || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ".-:[]".unicodeScalars.contains($0)
        }
        return "http://" + (plain ? host : settings.listening) + path
    }
}
