import NTAPIModel
import Foundation
import NTHashing
import NTHTTPCore

/// One-shot panorama uploads and their content (docs/api.md "Panoramas — one-shot upload").
enum PanoramaRoutes {
    /// `uploads`: a PUT of the IETF resumable-upload draft (iOS's URLSession) is a creation there.
    static func add(to table: inout RouteTable, _ context: ServiceContext, uploads: Uploads) {
        table.add(.put, "/v1/panoramas/{panoramaId}", bodyLimit: Int64(context.config.maxPanoramaBytes)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            if let creation = try Uploads.draftCreation(request.headers) {
                return try await uploads.draftCreate(request, creation.version, completes: creation.completes, panoramaId: id)
            }
            let floorId = try Identifier.checked(try request.queryParameter("floorId"), "floorId")
            let roomId = try request.queryParameter("roomId").map { text throws(ServiceError) in try Identifier.checked(text, "roomId") }
            let position = try PanoramaPosition.checked(request)
            let contentType = try PanoramaMediaType.validated(request.headers["content-type"])
            let declared = try ReprDigest.sha256(request.headers["repr-digest"]).map(ByteEncoding.hex)
            try PartialUploadMarks.refuseParts(request.headers)
            // A re-send whose digest is declared is answered without reading the body again.
            if let declared, let existing = try await context.readOne({ try await TourStore.panorama($0, tenant, id) }) {
                return try PanoramaUpload.resend(existing, digest: declared)
            }
            _ = try await context.read { try await TourStore.panoramaPlace($0, tenant, floorId: floorId, roomId: roomId) }
            let key = BlobKey(tenant: tenant, kind: .panorama, id: id)
            let received = try await context.blobs.receive(request.body, toward: key)
            if let declared, declared != received.sha256 {
                await context.blobs.discard(received)
                throw ServiceError(.digestMismatch, "the body's sha-256 is \(received.sha256), not the declared \(declared)")
            }
            do {
                try PanoramaMediaType.checkContent(contentType, head: received.head)
            } catch {
                await context.blobs.discard(received)
                throw error
            }
            // In place before its row is committed: the row is the switch.
            return try await context.withPanoramaTurns([key]) {
                let placement: PanoramaPlacement
                do {
                    placement = try await context.placePanorama(key) { try await context.blobs.place(received, as: key) }
                } catch {
                    await context.blobs.discard(received)
                    throw error
                }
                if case .stored(let existing) = placement {
                    await context.blobs.discard(received)
                    return try PanoramaUpload.resend(existing, digest: received.sha256)
                }
                context.crashPoints.reached(.panoramaPlaced)
                let stored: PanoramaRecord
                do {
                    stored = try await context.write { db in
                        try await TourStore.insertPanorama(db, tenant, id: id, floorId: floorId, roomId: roomId, position: position,
                                                     contentType: contentType, size: received.size, sha256: received.sha256)
                    }
                } catch {
                    await context.blobs.remove(key) // the row was refused: no file without its row
                    throw error
                }
                context.crashPoints.reached(.panoramaCommitted)
                context.panoramaStored(tenant, stored)
                return .document(.created, stored)
            }
        }

        // Where a draft upload may be created, its limits (the draft, -04 on).
        table.add(.options, "/v1/panoramas/{panoramaId}") { request in
            _ = try request.uuid("panoramaId")
            return Response(status: .noContent, headers: UploadRoutes.draftDiscovery(Int64(context.config.maxPanoramaBytes)))
        }

        table.add(.get, "/v1/panoramas/{panoramaId}") { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            guard let panorama = try await context.readOne({ try await TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            return .document(.ok, panorama)
        }

        table.add(.get, "/v1/panoramas/{panoramaId}/content") { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            guard let panorama = try await context.readOne({ try await TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            return try await context.content(BlobKey(tenant: tenant, kind: .panorama, id: id),
                                             StoredContent(size: panorama.size, sha256: panorama.sha256, contentType: panorama.contentType), for: request,
                                             sender: .storeMayRedirect)
        }

        table.add(.delete, "/v1/panoramas/{panoramaId}") { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            let key = BlobKey(tenant: tenant, kind: .panorama, id: id)
            return try await context.withPanoramaTurns([key]) {
                guard try await context.write({ try await TourStore.deletePanorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
                await context.blobs.remove(key)
                await context.previews.remove(tenant: tenant, ids: [id])
                return Response(status: .noContent)
            }
        }
    }
}

/// Where a panorama's file stands once its name is asked for.
enum PanoramaPlacement {
    /// The file has the panorama's name; its row is to be committed (or the file removed).
    case placed
    /// The panorama is stored already: this row.
    case stored(PanoramaRecord)
}

extension ServiceContext {
    /// Gives panorama `key` its file with `put` (false when the name is taken), or finds it
    /// stored. The caller holds the panorama's turn until its commit, so a re-send arriving
    /// while the first request is still storing waits and is answered as a re-send. A name
    /// taken without a row is then a file a failed removal left: it goes, and `put` runs again.
    func placePanorama(_ key: BlobKey, by put: () async throws -> Bool) async throws -> PanoramaPlacement {
        if try await put() { return .placed }
        if let existing = try await read({ try await TourStore.panorama($0, key.tenant, key.id) }) { return .stored(existing) }
        logger.warn("a panorama file without its row is replaced", ["panorama": key.id])
        await blobs.remove(key)
        guard try await put() else { throw ServiceError(.internal, "panorama \(key.id) cannot be placed") }
        return .placed
    }

    /// Removes panorama files after the commit that dropped their rows, in their turns (all
    /// held at once, asked about in one query); one stored again meanwhile (a new row) keeps
    /// its file.
    func removePanoramaFiles(_ keys: [BlobKey]) async {
        guard let tenant = keys.first?.tenant else { return }
        try? await withPanoramaTurns(keys) {
            let ids = keys.map(\.id)
            let storedAgain = try await read { try await TourStore.storedPanoramas($0, tenant, among: ids) }
            let gone = keys.filter { !storedAgain.contains($0.id) }
            await blobs.remove(gone)
            await previews.remove(tenant: tenant, ids: gone.map(\.id))
        }
    }
}

/// The idempotency of panorama ids, shared by one-shot and resumable uploads.
enum PanoramaUpload {
    /// A panorama id arriving again: the same digest is a harmless re-send (200, nothing
    /// written), another digest a conflict.
    static func resend(_ existing: PanoramaRecord, digest: String) throws(ServiceError) -> Response {
        guard existing.sha256 == digest else {
            throw ServiceError.conflict("panorama \(existing.id) is stored with another digest")
        }
        return .document(.ok, existing)
    }

}

extension PanoramaPosition {
    /// The `x`, `y` and `heading` query parameters of a panorama's creation (one-shot or draft).
    static func checked(_ request: Request) throws -> PanoramaPosition? {
        try checked(x: try request.queryParameter("x"), y: try request.queryParameter("y"), heading: try request.queryParameter("heading"))
    }
}
