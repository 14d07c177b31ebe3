import NTAPIModel
import Foundation
import NTHashing
import NTHTTPCore

/// One-shot panorama uploads and their content (docs/api.md "Panoramas — one-shot upload").
enum PanoramaRoutes {
    /// `uploads`: a PUT of the IETF resumable-upload draft (iOS's URLSession) is a creation there.
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext, uploads: Uploads) {
        let maxSize = Int64(context.config.maxPanoramaBytes)
        let creations = PanoramaCreations(panoramas: Panoramas(context: context), tus: TusUploads(uploads: uploads), draft: DraftUploads(uploads: uploads))
        table.addCreation(.put, "/v1/panoramas/{panoramaId}", bodyLimit: maxSize, answering: DraftUploads.answeringRefusals, parse: { request in
            try PanoramaCreation.put(request.head, panoramaId: try request.uuid("panoramaId"), maxLength: maxSize)
        }, creations.execute)

        // Where a draft upload may be created, its limits (the draft, -04 on).
        table.add(.options, "/v1/panoramas/{panoramaId}", .anyCredential) { request in
            _ = try request.uuid("panoramaId")
            return Response(status: .noContent, headers: UploadRoutes.draftDiscovery(Int64(context.config.maxPanoramaBytes)))
        }

        table.add(.get, "/v1/panoramas/{panoramaId}", .scoped(.read, .panorama)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            guard let panorama = try await context.readOne({ try await TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            return .document(.ok, panorama)
        }

        table.add(.get, "/v1/panoramas/{panoramaId}/content", .scoped(.read, .panorama)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            guard let panorama = try await context.readOne({ try await TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            return try await context.content(BlobKey(tenant: tenant, kind: .panorama, id: id),
                                             StoredContent(size: panorama.size, sha256: panorama.sha256, contentType: panorama.contentType), for: request,
                                             sender: .storeMayRedirect)
        }

        table.add(.delete, "/v1/panoramas/{panoramaId}", .scoped(.capture, .panorama)) { request in
            try await creations.panoramas.delete(request.tenant, try request.uuid("panoramaId"))
            return Response(status: .noContent)
        }
    }
}
