import NTAPIModel
import NTHashing
import NTHTTPCore
import NTImagePreviews
import NTSQLKit
import NTTourViewer

/// The tour viewer: the seed's screens as pages under /app (signed in with a tenant token) and
/// under /t/{secret} (one tour, through a share link), their images, and their static files.
enum ViewerRoutes {
    static func add(to table: inout RouteTable, _ context: ServiceContext) {
        for asset in ViewerAssets.all {
            table.add(.get, asset.path, headers: ViewerResponses.asset, inline: true) { _ in
                Response(status: .ok, contentType: asset.contentType, body: .bytes(asset.bytes))
            }
        }
        let formLimit = Int64(context.config.maxFormBodyBytes)
        let signIn = SignIn(context: context)
        table.group(ViewerErrors(logger: context.logger, shared: false), ServiceErrors(context)) { table in
            table.add(.get, "/app", headers: ViewerResponses.page, inline: true) { _ in .seeOther(ViewerPaths.list) }
            table.add(.get, ViewerPaths.signIn, headers: ViewerResponses.page) { request in try await signIn.form(request) }
            table.add(.post, ViewerPaths.signIn, bodyLimit: formLimit, headers: ViewerResponses.page) { request in try await signIn.submit(request) }
            table.group(SessionAuthentication(context: context)) { table in
                table.add(.post, ViewerPaths.signOut, bodyLimit: formLimit, headers: ViewerResponses.page) { request in try await signIn.signOut(request) }
                table.add(.get, ViewerPaths.list, headers: ViewerResponses.page) { request in try await propertyList(request, context) }
                addPages(to: &table, prefix: "/app", context)
                table.add(.get, "/app/properties/{id}", headers: ViewerResponses.page) { request in
                    try await page(.property(try request.uuid("id")), request, context)
                }
                table.add(.post, "/app/properties/{id}/shares", bodyLimit: formLimit, headers: ViewerResponses.page) { request in
                    try await makeShare(request, context)
                }
                table.add(.post, "/app/shares/{id}/revoke", bodyLimit: formLimit, headers: ViewerResponses.page) { request in
                    let (tenant, id) = (request.viewerScope.tenant, try request.uuid("id"))
                    _ = try await checkedForm(request)
                    guard let property = try await context.write({ try await ViewerStore.revokeShare($0, tenant, id: id) }) else {
                        throw ServiceError.notFound("share link", id)
                    }
                    return .seeOther(ViewerPaths.app.property(property))
                }
            }
        }
        table.group(ViewerErrors(logger: context.logger, shared: true, sharePlatformName: context.config.sharePlatformName), ServiceErrors(context), ShareAuthentication(context: context)) { table in
            table.add(.get, "/t/{secret}", headers: ViewerResponses.page, secretPath: true) { request in
                guard let property = request.viewerScope.property else { throw ServiceError.notFound("share link", "") }
                return try await page(.property(property), try await visited(request, context), context)
            }
            addPages(to: &table, prefix: "/t/{secret}", context)
            // A branded link's logo and accent; an unbranded link has neither.
            table.add(.get, "/t/{secret}/logo", headers: ViewerResponses.security, secretPath: true) { request in
                let tenant = request.viewerScope.tenant
                guard request.viewerScope.share?.branded == true, let logo = try await context.readOne({ try await BrandingStore.logo($0, tenant) }) else {
                    throw ServiceError.notFound("logo", "")
                }
                return .logo(logo.jpeg, updatedAt: logo.updatedAt, for: request)
            }
            table.add(.get, "/t/{secret}/brand.css", headers: ViewerResponses.security, secretPath: true) { request in
                let tenant = request.viewerScope.tenant
                guard request.viewerScope.share?.branded == true,
                      let accent = try await context.readOne({ try await BrandingStore.branding($0, tenant) }).accent else {
                    throw ServiceError.notFound("style sheet", "")
                }
                return Response(status: .ok, contentType: "text/css; charset=utf-8", headers: [HTTPField(name: "Cache-Control", value: "private, no-cache")],
                                body: .bytes(PageBrand.styleSheet(accent: accent)))
            }
        }
        // The viewer's beacons: JSON errors, as the API's.
        table.group(ServiceErrors(context), ShareAuthentication(context: context)) { table in
            table.add(.post, "/t/{secret}/visits/{visitId}", bodyLimit: 1024, headers: ViewerResponses.security, secretPath: true) { request in
                try await recordBeacon(request, context)
            }
        }
        // The embed form: framed by the sites its share names (its answers set the policy), so
        // apart from the other pages, whose routes frame them nowhere.
        table.group(ViewerErrors(logger: context.logger, shared: true, sharePlatformName: context.config.sharePlatformName, embedded: true),
                    ServiceErrors(context), ShareAuthentication(context: context)) { table in
            table.add(.get, "/t/{secret}" + ViewerPaths.embedSuffix, headers: ViewerResponses.embed, secretPath: true) { request in
                guard let property = request.viewerScope.property else { throw ServiceError.notFound("share link", "") }
                return try await page(.embed(.start(property)), try await visited(request, context), context)
            }
            table.add(.get, "/t/{secret}" + ViewerPaths.embedSuffix + "/panoramas/{id}", headers: ViewerResponses.embed, secretPath: true) { request in
                try await page(.embed(.panorama(try request.uuid("id"))), request, context)
            }
        }
    }

    /// The pages and images both views have, under `prefix`.
    private static func addPages(to table: inout RouteTable, prefix: String, _ context: ServiceContext) {
        let secret = prefix.contains("{secret}")
        table.add(.get, prefix + "/floors/{id}", headers: ViewerResponses.page, secretPath: secret) { request in
            try await page(.floor(try request.uuid("id")), request, context)
        }
        table.add(.get, prefix + "/rooms/{id}", headers: ViewerResponses.page, secretPath: secret) { request in
            try await page(.room(try request.uuid("id")), request, context)
        }
        table.add(.get, prefix + "/panoramas/{id}", headers: ViewerResponses.page, secretPath: secret) { request in
            try await page(.panorama(try request.uuid("id")), request, context)
        }
        table.add(.get, prefix + "/panoramas/{id}/preview", headers: ViewerResponses.security, secretPath: secret) { request in
            let (scope, panorama) = try await scopedPanorama(request, context)
            // Revalidated on every view (a 304 when unchanged): a revoked link shows nothing more.
            return try await context.preview(scope.tenant, panorama, for: request, cacheControl: "private, no-cache")
        }
        table.add(.get, prefix + "/panoramas/{id}/tiles/{level}/{tile}", headers: ViewerResponses.security, secretPath: secret) { request in
            let (scope, panorama) = try await scopedPanorama(request, context)
            return try await context.tile(scope.tenant, panorama, level: request.parameter("level") ?? "", name: request.parameter("tile") ?? "", for: request)
        }
        table.add(.get, prefix + "/panoramas/{id}/image", headers: ViewerResponses.security, secretPath: secret) { request in
            let (scope, panorama) = try await scopedPanorama(request, context)
            // Through a share link that offers it, the full-size image is the largest preview,
            // made again from the pixels: none of the camera's metadata (GPS position, device
            // serial, owner) reaches a visitor. The signed-in tenant gets its original.
            if scope.property != nil {
                guard scope.frame.offersOriginals else {
                    throw ServiceError(.forbidden, "This share link offers the tour's views, not its full-size images.")
                }
                return try await context.preview(scope.tenant, panorama, for: request, cacheControl: "private, no-cache", largest: true)
            }
            return try await context.content(BlobKey(tenant: scope.tenant, kind: .panorama, id: panorama.id),
                                             StoredContent(size: panorama.size, sha256: panorama.sha256, contentType: panorama.contentType), for: request,
                                             sender: .toursdOnly)
        }
    }

    /// A share link's opening (its first page, or its embed's): the visit recorded, its
    /// beacon's address on the pages (`PageFrame.visit`). Who the visitor is, is only hashed.
    private static func visited(_ request: Request, _ context: ServiceContext) async throws -> Request {
        // A HEAD (a link checker's, a preview's probe) is no one looking.
        guard let share = request.viewerScope.share, request.method != .head else { return request }
        let client = ShareVisitStore.Client(address: ClientAddress.of(peer: request.peerAddress, forwardedFor: request.headers["x-forwarded-for"],
                                                                      trusted: context.config.trustedProxyAddresses),
                                            userAgent: request.headers["user-agent"] ?? "")
        let limits = ShareVisitStore.Limits(visitsPerDay: context.config.shareVisitsPerDay, visitMaxSeconds: context.config.shareVisitMaxSeconds,
                                            eventSeconds: context.config.shareEventMinutes * 60)
        // The visitor's page comes first: a visit that cannot be written is logged, not shown.
        let recorded: String?
        do {
            recorded = try await context.write { try await ShareVisitStore.recordView($0, share, client, limits: limits, at: context.clock.now()) }
        } catch {
            context.logger.warn("a share link's visit was not recorded", ["share": share.id, "error": "\(error)"])
            recorded = nil
        }
        guard let visit = recorded else { return request }
        var (request, scope) = (request, request.viewerScope)
        scope.frame.visit = scope.frame.paths.base + "/visits/" + visit
        request.attributes[ViewerScopeAttribute.self] = scope
        return request
    }

    /// A beacon of the viewer: how long a panorama has been shown in a visit.
    private static func recordBeacon(_ request: Request, _ context: ServiceContext) async throws -> Response {
        guard let share = request.viewerScope.share else { throw ServiceError.notFound("share link", "") }
        let visit = try request.uuid("visitId")
        let body = try await request.body.collect(upTo: request.bodyLimit)
        let beacon = try ServiceError.parsing { () throws(InvalidDocument) in try VisitBeacon.parse(body, maxDepth: context.config.maxJsonDepth) }
        let maxSeconds = context.config.shareVisitMaxSeconds
        switch try await context.write({ try await ShareVisitStore.recordBeacon($0, share, visit: visit, beacon, visitMaxSeconds: maxSeconds, at: context.clock.now()) }) {
        case .recorded: return Response(status: .noContent)
        case .noVisit: throw ServiceError.notFound("visit", visit)
        case .noPanorama: throw ServiceError.notFound("panorama", beacon.panoramaId)
        }
    }

    private static func scopedPanorama(_ request: Request, _ context: ServiceContext) async throws -> (ViewerScope, PanoramaRecord) {
        let (scope, id) = (request.viewerScope, try request.uuid("id"))
        guard let panorama = try await context.readOne({ try await TourStore.panorama($0, scope.tenant, id) }),
              scope.property == nil || scope.property == panorama.propertyId else { throw ServiceError.notFound("panorama", id) }
        return (scope, panorama)
    }

    private enum Page {
        case property(String), floor(String), room(String), panorama(String), embed(Embedded)

        /// What an embed form shows: its tour's first panorama (by the property's id), or one.
        enum Embedded { case start(String), panorama(String) }

        var part: ViewerStore.Part? {
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

    /// Everything a page shows, read in one transaction.
    private struct PageData: Sendable {
        var tour: TourDocument
        var branding: BrandingDocument
        var status: ServerStatusDocument?
        var shares: [ShareDocument]?
    }

    /// A page of the scope's tenant; another tenant's ids, and anything outside a share
    /// link's property, are 404 as in the API.
    private static func page(_ page: Page, _ request: Request, _ context: ServiceContext,
                             madeShare: (url: String, embeddable: Bool)? = nil) async throws -> Response {
        let scope = request.viewerScope
        let tenant = scope.tenant
        let managesShares = scope.frame.csrf != nil
        let data = try await context.read { db -> PageData? in
            let propertyId: String?
            if let part = page.part {
                propertyId = try await ViewerStore.propertyId(db, tenant, of: part)
            } else {
                propertyId = page.id
            }
            guard let propertyId, scope.property == nil || scope.property == propertyId,
                  var tour = try await TourStore.tour(db, tenant, propertyId: propertyId) else { return nil }
            let branding = try await BrandingStore.branding(db, tenant)
            // Floors without a name of their own are named as the tenant names floors.
            for index in tour.floors.indices where tour.floors[index].floor.name == nil {
                tour.floors[index].floor.name = branding.floorNames.title(tour.floors[index].floor.number)
            }
            guard case .property = page else { return PageData(tour: tour, branding: branding) }
            return PageData(tour: tour, branding: branding, status: try await TourStore.status(db, tenant, propertyId),
                            // The page lists the newest links; the API pages through them all.
                            shares: managesShares ? try await ViewerStore.shares(db, tenant, tourId: tour.tourId, limit: 50, after: nil, at: context.clock.now())?.page : nil)
        }
        guard let data else { throw ServiceError.notFound(page.name, page.id) }
        let widths = PreviewWidths(thumbnail: context.previewWidth(near: 640), viewer: context.config.previewWidths.last ?? 1024,
                                   cover: context.previewWidth(near: 1280))
        var frame = scope.frame
        if let share = scope.share, share.branded, !data.branding.isEmpty {
            frame.brand = PageBrand(name: data.branding.name, logo: data.branding.logo.map { _ in frame.paths.base + "/logo" },
                                    style: data.branding.accent.map { _ in frame.paths.base + "/brand.css" }, contact: data.branding.contact)
        }
        let bytes: [UInt8]?
        switch page {
        case .property:
            guard let status = data.status else { throw ServiceError.notFound(page.name, page.id) }
            if frame.paths.isShare {
                let cover = ViewerPages.coverPanorama(of: data.tour)
                let shown = if let cover { try await image(cover, in: data.tour, tenant, widths, context) } else { (readable: true, tiles: ViewerTiles?.none) }
                bytes = ViewerPages.shareStart(frame, data.tour, status: status, widths: widths, readable: shown.readable, tiles: shown.tiles)
                break
            }
            let shares = data.shares.map { list in
                ShareSection(shares: list, madeURL: madeShare?.url, madeEmbeddable: madeShare?.embeddable ?? false, lifetimes: context.shareLifetimes,
                             defaultLifetime: context.config.shareLifetime)
            }
            bytes = ViewerPages.property(frame, data.tour, status: status, shares: shares, widths: widths)
        case .floor(let id): bytes = ViewerPages.floor(frame, data.tour, floorId: id, widths: widths)
        case .room(let id): bytes = ViewerPages.room(frame, data.tour, roomId: id, widths: widths)
        case .panorama(let id):
            let shown = try await image(id, in: data.tour, tenant, widths, context)
            bytes = ViewerPages.panorama(frame, data.tour, panoramaId: id, widths: widths, readable: shown.readable, tiles: shown.tiles)
        case .embed(let shown):
            let id: String?
            switch shown {
            case .start: id = ViewerPages.firstPanorama(of: data.tour)
            case .panorama(let panorama): id = panorama
            }
            guard let id else { throw ServiceError(.notFound, "This tour has no panoramas to show yet.") }
            let shown = try await image(id, in: data.tour, tenant, widths, context)
            bytes = ViewerPages.embed(frame, data.tour, panoramaId: id, widths: widths, readable: shown.readable, tiles: shown.tiles)
            guard let bytes else { throw ServiceError.notFound(page.name, page.id) }
            return .page(bytes, headers: ViewerResponses.framing(allowing: scope.frameAncestors))
        }
        guard let bytes else { throw ServiceError.notFound(page.name, page.id) }
        return .page(bytes)
    }

    /// How the viewer draws the panorama: from its tiles once they are made (it is readable
    /// then); else whether the server can draw it at all. When too many previews are being
    /// made, it is taken to be: the page still comes, its viewer's image asks again on its own.
    private static func image(_ id: String, in tour: TourDocument, _ tenant: Int64, _ widths: PreviewWidths,
                              _ context: ServiceContext) async throws -> (readable: Bool, tiles: ViewerTiles?) {
        guard let panorama = tour.floors.flatMap(\.panoramas).first(where: { $0.id == id }) else { return (true, nil) }
        if let pyramid = await context.tilePyramid(tenant, panorama) {
            return (true, ViewerTiles(faceSize: pyramid.faceSize, levels: pyramid.levels, tileSize: TilePyramid.tileSize))
        }
        do {
            return (try await context.panoramaIsReadable(tenant, panorama, width: widths.viewer), nil)
        } catch let error as StorageError where error.kind == .unavailable {
            return (true, nil)
        }
    }

    private static func propertyList(_ request: Request, _ context: ServiceContext) async throws -> Response {
        let scope = request.viewerScope
        let query = String((try request.queryParameter("q") ?? "").trimmingCharacters(in: .whitespaces).prefix(200))
        let number = try request.queryParameter("page").map { text throws(ServiceError) in
            guard let value = Int(text), (1...100_000).contains(value) else { throw ServiceError.badRequest("page must be 1 to 100000") }
            return value
        } ?? 1
        let pageSize = context.config.viewerPageSize
        let (items, hasNext) = try await context.read { db in
            try await ViewerStore.propertyList(db, scope.tenant, query: query, page: number, pageSize: pageSize)
        }
        return .page(ViewerPages.propertyList(scope.frame, items, query: query, page: number, hasNext: hasNext))
    }

    private static func makeShare(_ request: Request, _ context: ServiceContext) async throws -> Response {
        let (tenant, propertyId) = (request.viewerScope.tenant, try request.uuid("id"))
        let form = try await checkedForm(request)
        guard let seconds = form["expiresInSeconds"].flatMap({ Int($0) }), context.shareLifetimes.contains(seconds) else {
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
                                  branded: branding == "branded")
                .validated(context.config.shareMinSeconds...context.config.shareMaxSeconds, maxOrigins: context.config.maxFrameAncestorsPerShare)
        }
        let maxLive = context.config.maxSharesPerTour
        let share = try await context.write { db -> ShareDocument? in
            guard let property = try await TourStore.property(db, tenant, propertyId) else { return nil }
            return try await ViewerStore.createShare(db, tenant, tourId: property.tourId, input, maxLive: maxLive, at: context.clock.now())
        }
        guard let share, let url = share.url else { throw ServiceError.notFound("property", propertyId) }
        return try await page(.property(propertyId), request, context,
                              madeShare: (context.absoluteURL(url, request), !share.frameAncestors.isEmpty))
    }

    /// The form of a signed-in POST, after its CSRF token matched the session's.
    static func checkedForm(_ request: Request) async throws -> FormFields {
        let form = try FormFields(try await request.body.collect(upTo: request.bodyLimit))
        guard let session = request.attributes[ViewerSessionAttribute.self], let csrf = form["csrf"],
              constantTimeEquals(Array(csrf.utf8), Array(session.csrf.utf8)) else {
            throw ServiceError(.forbidden, "This form has expired. Go back, reload the page and try again.")
        }
        return form
    }
}

extension ServiceContext {
    /// The lifetimes the property page offers a share link, within the configured range.
    var shareLifetimes: [Int] {
        // The default among them, wherever the operator set it.
        let offered = Set([3600, 86_400, 7 * 86_400, 30 * 86_400, 90 * 86_400, config.shareLifetime])
        return offered.filter { (config.shareMinSeconds...config.shareMaxSeconds).contains($0) }.sorted()
    }

    /// The configured preview width closest to `width`.
    func previewWidth(near width: Int) -> Int {
        config.previewWidths.min { abs($0 - width) < abs($1 - width) } ?? width
    }

    /// A path as the URL a browser elsewhere opens: under `publicUrl`, else the Host the
    /// request came to (when it is a plain host name or address).
    func absoluteURL(_ path: String, _ request: Request) -> String {
        if !config.publicUrl.isEmpty { return config.publicUrl + path }
        let host = request.headers["host"] ?? ""
        let plain = !host.isEmpty && host.utf8.count <= 255 && host.unicodeScalars.allSatisfy {
            $0.properties.isASCIIHexDigit || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ".-:[]".unicodeScalars.contains($0)
        }
        return "http://" + (plain ? host : "\(config.host):\(config.port)") + path
    }
}
