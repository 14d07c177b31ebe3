import Foundation
import NTAPIModel
import NTHashing
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// One-shot panorama uploads and their content (docs/api.md "Panoramas — one-shot upload").
enum PanoramaRoutes {
    /// `creations`: a PUT of the IETF resumable-upload draft (iOS's URLSession) is a creation there.
    static func add(to api: inout APIRoutes, settings: APISettings, creations: PanoramaCreations, contents: ContentAnswers) {
        let maxSize = Int64(settings.maxPanoramaBytes)
        api.add(.put, "/v1/panoramas/{panoramaId}", .panoramaCreation, bodyLimit: maxSize, answering: DraftUploads.answeringRefusals, parse: { request in
            try CreationCommand.put(request.head, panoramaId: try request.uuid("panoramaId"), maxLength: maxSize)
        }, creations.execute)

        let panorama = Addressed.by("panoramaId", AccessTarget.panorama)
        // Where a draft upload may be created, its limits (the draft, -04 on).
        api.add(.options, "/v1/panoramas/{panoramaId}", .anyCredential, parse: panorama) { _, _, _ in
            Response(status: .noContent, headers: UploadRoutes.draftDiscovery(maxSize))
        }

        api.add(.get, "/v1/panoramas/{panoramaId}", .scoped(.read), readsOneRecord: true, parse: panorama) { command, principal, _ in
            .document(.ok, try await creations.panoramas.panorama(principal.tenant, command.id))
        }

        api.add(.get, "/v1/panoramas/{panoramaId}/content", .scoped(.read), parse: panorama) { command, principal, request in
            let (tenant, id) = (principal.tenant, command.id)
            let panorama = try await creations.panoramas.panorama(tenant, id)
            return try await contents.content(BlobKey(tenant: tenant, kind: .panorama, id: id),
                                              StoredContent(size: panorama.size, sha256: panorama.sha256, contentType: panorama.contentType), for: request,
                                              sender: .storeMayRedirect)
        }

        api.add(.delete, "/v1/panoramas/{panoramaId}", .scoped(.capture), parse: panorama) { command, principal, _ in
            try await creations.panoramas.delete(principal.tenant, command.id)
            return Response(status: .noContent)
        }
    }
}
