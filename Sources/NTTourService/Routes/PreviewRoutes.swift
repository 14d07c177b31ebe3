import NTAPIModel
import NTHTTPCore
import NTImagePreviews

/// `GET /v1/panoramas/{panoramaId}/preview?width=N`: a JPEG of the panorama at one of the
/// configured widths, made once and then sent from its file.
enum PreviewRoutes {
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext) {
        table.add(.get, "/v1/panoramas/{panoramaId}/preview", .scoped(.read, .panorama)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            guard let panorama = try await context.readOne({ try await TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            return try await context.preview(tenant, panorama, for: request, cacheControl: "private, max-age=86400")
        }
    }
}

extension ServiceContext {
    /// Whether a panorama can be shown: its preview for the viewer made first when not cached.
    func panoramaIsReadable(_ tenant: Int64, _ panorama: PanoramaRecord, width: Int) async throws -> Bool {
        try await previews.unreadable(tenant: tenant, panorama, width: width, source: previewSource(tenant, panorama),
                                      stillStored: stillStored(tenant, panorama)) == nil
    }

    /// The tile pyramid of a panorama whose tiles are made; nil while they are not, and then
    /// asked for (a daemon stopped mid-way, or too many waiting, when it was stored).
    func tilePyramid(_ tenant: Int64, _ panorama: PanoramaRecord) async -> TilePyramid? {
        if let pyramid = await tiles.pyramid(tenant: tenant, panorama) { return pyramid }
        tiles.request(tenant: tenant, panorama, source: previewSource(tenant, panorama), stillStored: stillStored(tenant, panorama))
        return nil
    }

    /// Where the panorama's bytes are read from: a local file of the store's.
    func previewSource(_ tenant: Int64, _ panorama: PanoramaRecord) -> PanoramaSource {
        { [blobs] in try await blobs.localFile(BlobKey(tenant: tenant, kind: .panorama, id: panorama.id), sha256: panorama.sha256) }
    }

    /// Whether the panorama is still stored with these bytes, for a preview made meanwhile.
    func stillStored(_ tenant: Int64, _ panorama: PanoramaRecord) -> @Sendable () async -> Bool {
        { [self] in
            // A read that fails leaves the preview: the panorama's deletion removes it then.
            (try? await read { try await TourStore.panorama($0, tenant, panorama.id) }).map { $0?.sha256 == panorama.sha256 } ?? true
        }
    }

    /// One tile of a tiled panorama (`level`, and a name as `f2_3.jpg`): 404 for a tile the
    /// pyramid has not, or while the tiles are being made.
    func tile(_ tenant: Int64, _ panorama: PanoramaRecord, level levelText: String, name: String, for request: Request) async throws -> Response {
        // Another daemon's page may name tiles this one has not made yet: asked for, then.
        guard let pyramid = await tilePyramid(tenant, panorama), let level = Int(levelText), String(level) == levelText,
              let tile = TilePyramid.parseTileName(Substring(name)), pyramid.contains(level: level, row: tile.row, column: tile.column) else {
            throw ServiceError(.notFound, "panorama \(panorama.id) has no tile \(levelText)/\(name)")
        }
        let etag = "\"\(panorama.sha256.prefix(32))-\(level)-\(name.dropLast(4))\""
        // Revalidated like the viewer's previews: a revoked share link shows nothing more.
        let headers = [HTTPField(name: "ETag", value: etag), HTTPField(name: "Cache-Control", value: "private, no-cache")]
        if StoredContent.matches(request.headers["if-none-match"], etag) {
            return Response(status: .notModified, headers: headers)
        }
        let path = tiles.path(tenant: tenant, panorama, level: level, face: tile.face, row: tile.row, column: tile.column)
        guard let opened = try await tiles.io.run({ PreviewCache.openFile(path) }) else {
            throw ServiceError(.notFound, "panorama \(panorama.id) has no tile \(levelText)/\(name)")
        }
        return Response(status: .ok, contentType: "image/jpeg", headers: headers, body: .file(FileRegion(fd: opened.fd, offset: 0, length: opened.size)))
    }

    /// The preview answer of a panorama already found in the tenant's storage: 304 for the
    /// ETag the client has, else the file (made first when not cached). `cacheControl`: how
    /// long a browser may keep it without asking (the viewer's previews: not at all, since a
    /// share link can be revoked). `largest`: the widest preview, whatever the query asks.
    func preview(_ tenant: Int64, _ panorama: PanoramaRecord, for request: Request, cacheControl: String, largest: Bool = false) async throws -> Response {
        let widths = config.previewWidths
        let width: Int
        if largest {
            width = widths.max() ?? widths[0]
        } else if let text = try request.queryParameter("width") {
            guard let value = Int(text), widths.contains(value) else {
                throw ServiceError.badRequest("width must be one of \(widths.map(String.init).joined(separator: ", "))")
            }
            width = value
        } else {
            width = widths[0]
        }
        let etag = "\"\(panorama.sha256.prefix(32))-\(width)\""
        let headers = [HTTPField(name: "ETag", value: etag), HTTPField(name: "Cache-Control", value: cacheControl)]
        if StoredContent.matches(request.headers["if-none-match"], etag) {
            return Response(status: .notModified, headers: headers)
        }
        let body: ResponseBody = switch try await previews.preview(tenant: tenant, panorama, width: width, source: previewSource(tenant, panorama),
                                                                  stillStored: stillStored(tenant, panorama)) {
        case .file(let fd, let size): .file(FileRegion(fd: fd, offset: 0, length: size))
        case .made(let bytes): .bytes(bytes)
        }
        return Response(status: .ok, contentType: "image/jpeg", headers: headers, body: body)
    }
}
