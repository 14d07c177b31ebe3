import NTAPIModel
import NTHTTPCore
import NTImagePreviews
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// A tenant's branding on its share links (docs/api.md "Branding"). Only a tenant token may set
/// it; a branded link's visitors see it (`ViewerRoutes`).
enum BrandingRoutes {
    static func add(to api: inout APIRoutes, settings: APISettings, branding: Branding) {
        let maxJsonDepth = settings.maxJsonDepth

        api.add(.get, "/v1/branding", .tenant, parse: Addressed.nothing) { _, principal, _ in
            .document(.ok, try await branding.branding(principal.tenant))
        }

        api.add(.put, "/v1/branding", .tenant, bodyLimit: Int64(settings.maxJsonBodyBytes), parse: Addressed.nothing) { _, principal, request in
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try BrandingInput.parse(body, maxDepth: maxJsonDepth) }
            return .document(.ok, try await branding.put(principal.tenant, input))
        }

        // The logo: checked as a panorama is (its type, its signature, the decode budget).
        api.add(.put, "/v1/branding/logo", .tenant, bodyLimit: Int64(settings.maxLogoBytes), parse: Addressed.nothing) { _, principal, request in
            let type = try PanoramaMediaType.validated(request.headers["content-type"], what: "a logo")
            let bytes = try await request.body.collect(upTo: request.bodyLimit)
            try PanoramaMediaType.checkContent(type, head: Array(bytes.prefix(32)), what: "a logo")
            guard let format = ImageFormat(mediaType: type) else { throw ServiceError(.unsupportedMediaType, "a logo must be a JPEG, HEIC or PNG image") }
            return .document(.ok, try await branding.putLogo(principal.tenant, bytes, format))
        }

        api.add(.get, "/v1/branding/logo", .tenant, parse: Addressed.nothing) { _, principal, request in
            guard let logo = try await branding.logo(principal.tenant) else { throw ServiceError.notFound("logo", "") }
            return .logo(logo.jpeg, updatedAt: logo.updatedAt, for: request)
        }

        api.add(.delete, "/v1/branding/logo", .tenant, parse: Addressed.nothing) { _, principal, _ in
            try await branding.removeLogo(principal.tenant)
            return Response(status: .noContent)
        }
    }
}
