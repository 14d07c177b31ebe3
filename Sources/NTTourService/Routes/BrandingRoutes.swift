import NTAPIModel
import NTHTTPCore
import NTImagePreviews

/// A tenant's branding on its share links (docs/api.md "Branding"). Only a tenant token may set
/// it; a branded link's visitors see it (`ViewerRoutes`).
enum BrandingRoutes {
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext) {
        let config = context.config

        table.add(.get, "/v1/branding", .tenant(nil)) { request in
            let tenant = request.tenant
            return .document(.ok, try await context.readOne { try await BrandingStore.branding($0, tenant) })
        }

        table.add(.put, "/v1/branding", .tenant(nil), bodyLimit: Int64(config.maxJsonBodyBytes)) { request in
            let tenant = request.tenant
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try BrandingInput.parse(body, maxDepth: config.maxJsonDepth) }
            return .document(.ok, try await context.write { try await BrandingStore.put($0, tenant, input, at: context.clock.now()) })
        }

        // The logo: checked as a panorama is (its type, its signature, the decode budget), then
        // made again from its pixels, `logoWidth` wide at most: none of the file's metadata stays.
        table.add(.put, "/v1/branding/logo", .tenant(nil), bodyLimit: Int64(config.maxLogoBytes)) { request in
            let tenant = request.tenant
            let type = try PanoramaMediaType.validated(request.headers["content-type"], what: "a logo")
            let bytes = try await request.body.collect(upTo: request.bodyLimit)
            try PanoramaMediaType.checkContent(type, head: Array(bytes.prefix(32)), what: "a logo")
            guard let format = ImageFormat(mediaType: type) else { throw ServiceError(.unsupportedMediaType, "a logo must be a JPEG, HEIC or PNG image") }
            let jpeg: [UInt8]
            do {
                jpeg = try await context.previews.reencoded(bytes, format, width: config.logoWidth)
            } catch let error as PreviewError {
                throw ServiceError.badRequest("the logo cannot be used: \(error.message)")
            }
            guard let size = JPEGPreview.dimensions(of: jpeg) else { throw ServiceError(.internal, "the logo was made without a size") }
            return .document(.ok, try await context.write { try await BrandingStore.putLogo($0, tenant, (jpeg, size.width, size.height), at: context.clock.now()) })
        }

        table.add(.get, "/v1/branding/logo", .tenant(nil)) { request in
            let tenant = request.tenant
            guard let logo = try await context.readOne({ try await BrandingStore.logo($0, tenant) }) else { throw ServiceError.notFound("logo", "") }
            return .logo(logo.jpeg, updatedAt: logo.updatedAt, for: request)
        }

        table.add(.delete, "/v1/branding/logo", .tenant(nil)) { request in
            let tenant = request.tenant
            _ = try await context.write { try await BrandingStore.putLogo($0, tenant, nil, at: context.clock.now()) }
            return Response(status: .noContent)
        }
    }
}

extension Response {
    /// A logo's JPEG, revalidated by its time (a 304 when unchanged).
    static func logo(_ jpeg: [UInt8], updatedAt: String, for request: Request) -> Response {
        let etag = "\"" + updatedAt + "\""
        let headers = [HTTPField(name: "ETag", value: etag), HTTPField(name: "Cache-Control", value: "private, no-cache")]
        if StoredContent.matches(request.headers["if-none-match"], etag) { return Response(status: .notModified, headers: headers) }
        return Response(status: .ok, contentType: "image/jpeg", headers: headers, body: .bytes(jpeg))
    }
}
