import NTAPIModel
import Foundation
import NTHashing
import NTHTTPCore

/// One-shot panorama uploads and their content (docs/api.md "Panoramas — one-shot upload").
enum PanoramaRoutes {
    /// `uploads`: a PUT of the IETF resumable-upload draft (iOS's URLSession) is a creation there.
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext, uploads: Uploads) {
        let (panoramas, draft) = (Panoramas(context: context), DraftUploads(uploads: uploads))
        table.add(.put, "/v1/panoramas/{panoramaId}", .panoramaCreation, bodyLimit: Int64(context.config.maxPanoramaBytes)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            if let creation = try DraftUploads.draftCreation(request.headers) {
                return try await draft.create(request, creation.version, completes: creation.completes, panoramaId: id)
            }
            let floorId = try Identifier.checked(try request.queryParameter("floorId"), "floorId")
            let roomId = try request.queryParameter("roomId").map { text throws(ServiceError) in try Identifier.checked(text, "roomId") }
            let position = try PanoramaPosition.checked(request)
            let contentType = try PanoramaMediaType.validated(request.headers["content-type"])
            let declared = try ReprDigest.sha256(request.headers["repr-digest"]).map(ByteEncoding.hex)
            try PartialUploadMarks.refuseParts(request.headers)
            switch try await panoramas.store(tenant, id, floorId: floorId, roomId: roomId, position: position, contentType: contentType,
                                             declared: declared, body: request.body) {
            case .created(let stored): return .document(.created, stored)
            case .resent(let existing): return .document(.ok, existing)
            }
        }

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
            try await panoramas.delete(request.tenant, try request.uuid("panoramaId"))
            return Response(status: .noContent)
        }
    }
}

extension PanoramaPosition {
    /// The `x`, `y` and `heading` query parameters of a panorama's creation (one-shot or draft).
    static func checked(_ request: Request) throws -> PanoramaPosition? {
        try checked(x: try request.queryParameter("x"), y: try request.queryParameter("y"), heading: try request.queryParameter("heading"))
    }
}
