import NTAPIModel
import NTCoordination
import NTHashing

/// Storing and removing a panorama: its file and row change together, in the panorama's turn
/// (one request at a time per id, in every daemon), the file in place before the row that
/// names it. The one-shot upload here; a resumable upload's finish places its file the same
/// way (`placePanorama`). Knows no HTTP.
struct Panoramas: Sendable {
    let context: ServiceContext

    /// What a store did: a new panorama, or the one stored already under the id (the same
    /// bytes sent again: nothing written).
    enum Stored {
        case created(PanoramaRecord)
        case resent(PanoramaRecord)
    }

    /// Stores the panorama `creation` names from `body`: its digest (when declared, checked)
    /// and its content (the media type's signature), then its file and its row.
    func store(_ tenant: Int64, _ creation: PanoramaCreation, body: some ByteStream) async throws -> Stored {
        let (id, floorId, roomId) = (creation.panoramaId, creation.floorId, creation.roomId)
        let (position, contentType, declared) = (creation.position, creation.contentType, creation.declaredSHA256)
        // A re-send whose digest is declared is answered without reading the body again.
        if let declared, let existing = try await context.readOne({ try await TourStore.panorama($0, tenant, id) }) {
            return .resent(try PanoramaUpload.resend(existing, digest: declared))
        }
        _ = try await context.read { try await TourStore.panoramaPlace($0, tenant, floorId: floorId, roomId: roomId) }
        let key = BlobKey(tenant: tenant, kind: .panorama, id: id)
        let received = try await context.blobs.receive(body, toward: key)
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
                return .resent(try PanoramaUpload.resend(existing, digest: received.sha256))
            }
            context.crashPoints.reached(.panoramaPlaced)
            let stored: PanoramaRecord
            do {
                stored = try await context.write { db in
                    try await TourStore.insertPanorama(db, tenant, id: id, floorId: floorId, roomId: roomId, position: position,
                                                       contentType: contentType, size: received.size, sha256: received.sha256, at: context.clock.now())
                }
            } catch {
                await context.blobs.remove(key) // the row was refused: no file without its row
                throw error
            }
            context.crashPoints.reached(.panoramaCommitted)
            context.panoramaStored(tenant, stored)
            return .created(stored)
        }
    }

    /// Removes panorama `id`: its row, then its file and previews.
    func delete(_ tenant: Int64, _ id: String) async throws {
        let key = BlobKey(tenant: tenant, kind: .panorama, id: id)
        try await context.withPanoramaTurns([key]) {
            guard try await context.write({ try await TourStore.deletePanorama($0, tenant, id, at: context.clock.now()) }) else { throw ServiceError.notFound("panorama", id) }
            await context.blobs.remove(key)
            await context.previews.remove(tenant: tenant, ids: [id])
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
    static func resend(_ existing: PanoramaRecord, digest: String) throws(ServiceError) -> PanoramaRecord {
        guard existing.sha256 == digest else {
            throw ServiceError.conflict("panorama \(existing.id) is stored with another digest")
        }
        return existing
    }

}

extension ServiceContext {
    /// Runs `body` holding the turns of panoramas `keys`: one request at a time per panorama
    /// id, in every daemon of the deployment, while its file and row change. A re-send arriving
    /// while the first is storing waits (up to `uploadTakeoverSeconds`, then 503) and is
    /// answered as a re-send, instead of finding a file without its row.
    func withPanoramaTurns<T>(_ keys: [BlobKey], _ body: () async throws -> T) async throws -> T {
        let wait = LockWait(seconds: Double(config.uploadTakeoverSeconds), busy: "another request is storing this panorama; try again")
        return try await LockOrder.entering(.panoramaTurn) {
            try await locker.withLocks(keys.map { LockName("panorama/\($0.tenant)/\($0.id)", reach: .deployment) }, wait: wait, body)
        }
    }
}
