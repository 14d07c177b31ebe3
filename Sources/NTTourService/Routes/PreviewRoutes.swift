import NTAPIModel
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// `GET /v1/panoramas/{panoramaId}/preview?width=N`: a JPEG of the panorama at one of the
/// configured widths, made once and then sent from its file.
enum PreviewRoutes {
    static func add(to api: inout APIRoutes, panoramas: Panoramas, answers: ImageAnswers) {
        api.add(.get, "/v1/panoramas/{panoramaId}/preview", .scoped(.read), parse: Addressed.by("panoramaId", AccessTarget.panorama)) { command, principal, request in
            let (tenant, id) = (principal.tenant, command.id)
            let panorama = try await panoramas.panorama(tenant, id)
            return try await answers.preview(tenant, panorama, for: request, cacheControl: "private, max-age=86400")
        }
    }
}
