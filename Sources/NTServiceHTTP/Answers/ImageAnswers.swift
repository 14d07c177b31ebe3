import NTHTTPCore
import NTImagePreviews
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// The answers of a panorama's previews and tiles (the API's and the viewer's), from
/// `PanoramaImages`: revalidated by their ETags, the bytes sent from their files.
package struct ImageAnswers: Sendable {
    package let images: PanoramaImages
    package let widths: [Int]

    package init(images: PanoramaImages, widths: [Int]) {
        self.images = images
        self.widths = widths
    }

    /// The preview answer of a panorama already found in the tenant's storage: 304 for the
    /// ETag the client has, else the file (made first when not cached). `cacheControl`: how
    /// long a browser may keep it without asking (the viewer's previews: not at all, since a
    /// share link can be revoked). `largest`: the widest preview, whatever the query asks.
    package func preview(_ tenant: Int64, _ panorama: PanoramaRecord, for request: Request, cacheControl: String, largest: Bool = false) async throws -> Response {
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
        return try await preview(tenant, panorama, width: width, for: request, cacheControl: cacheControl)
    }

    /// The preview `width` wide, of any width (a share link's picture for chats is one of its own).
    package func preview(_ tenant: Int64, _ panorama: PanoramaRecord, width: Int, for request: Request, cacheControl: String) async throws -> Response {
        let etag = "\"\(panorama.sha256.prefix(32))-\(width)\""
        let headers = [HTTPField(name: "ETag", value: etag), HTTPField(name: "Cache-Control", value: cacheControl)]
        if StoredContent.matches(request.headers["if-none-match"], etag) {
            return Response(status: .notModified, headers: headers)
        }
        let body: ResponseBody = switch try await images.preview(tenant, panorama, width: width) {
        case .file(let fd, let size): .file(FileRegion(fd: fd, offset: 0, length: size))
        case .made(let bytes): .bytes(bytes)
        }
        return Response(status: .ok, contentType: "image/jpeg", headers: headers, body: body)
    }

    /// One tile of a tiled panorama (`level`, and a name as `f2_3.jpg`): 404 for a tile the
    /// pyramid has not, or while the tiles are being made.
    package func tile(_ tenant: Int64, _ panorama: PanoramaRecord, level levelText: String, name: String, for request: Request) async throws -> Response {
        // Another daemon's page may name tiles this one has not made yet: asked for, then.
        guard let pyramid = await images.pyramid(tenant, panorama), let level = Int(levelText), String(level) == levelText,
              let tile = TilePyramid.parseTileName(Substring(name)), pyramid.contains(level: level, row: tile.row, column: tile.column) else {
            throw ServiceError(.notFound, "panorama \(panorama.id) has no tile \(levelText)/\(name)")
        }
        let etag = "\"\(panorama.sha256.prefix(32))-\(level)-\(name.dropLast(4))\""
        // Revalidated like the viewer's previews: a revoked share link shows nothing more.
        let headers = [HTTPField(name: "ETag", value: etag), HTTPField(name: "Cache-Control", value: "private, no-cache")]
        if StoredContent.matches(request.headers["if-none-match"], etag) {
            return Response(status: .notModified, headers: headers)
        }
        guard let opened = try await images.tile(tenant, panorama, level: level, face: tile.face, row: tile.row, column: tile.column) else {
            throw ServiceError(.notFound, "panorama \(panorama.id) has no tile \(levelText)/\(name)")
        }
        return Response(status: .ok, contentType: "image/jpeg", headers: headers, body: .file(FileRegion(fd: opened.fd, offset: 0, length: opened.size)))
    }
}
