import NTAPIModel
import NTCoordination
import NTHashing
import NTServiceModel
import NTServiceStorage

/// One request at a time per panorama id, in every daemon of the deployment, while its file and
/// row change: a re-send arriving while the first is storing waits (up to
/// `uploadTakeoverSeconds`, then 503) and is answered as a re-send, instead of finding a file
/// without its row.
package struct PanoramaTurns: Sendable {
    package let locker: any Locker
    package let waitSeconds: Int

    package init(locker: any Locker, waitSeconds: Int) {
        self.locker = locker
        self.waitSeconds = waitSeconds
    }

    /// Runs `body` holding the turns of panoramas `keys` (all at once, in the lock order).
    package func holding<T>(_ keys: [BlobKey], _ body: () async throws -> T) async throws -> T {
        let wait = LockWait(seconds: Double(waitSeconds), busy: "another request is storing this panorama; try again")
        return try await LockOrder.entering(.panoramaTurn) {
            try await locker.withLocks(keys.map { LockName("panorama/\($0.tenant)/\($0.id)", reach: .deployment) }, wait: wait, body)
        }
    }
}

/// Storing and removing a panorama: its file and row change together, in the panorama's turn,
/// the file in place before the row that names it. The one-shot upload here; a resumable
/// upload's finish places its file the same way (`place`). Knows no HTTP.
package struct Panoramas: Sendable {
    package let records: Records
    package let blobs: any BlobStore
    package let clock: any ServiceClock
    package let crashPoints: CrashPoints
    package let turns: PanoramaTurns
    /// Told of each panorama stored (its processing), and of those removed (their previews).
    package let images: PanoramaImages

    package init(records: Records, blobs: any BlobStore, clock: any ServiceClock, crashPoints: CrashPoints, turns: PanoramaTurns, images: PanoramaImages) {
        self.records = records
        self.blobs = blobs
        self.clock = clock
        self.crashPoints = crashPoints
        self.turns = turns
        self.images = images
    }

    /// What a store did: a new panorama, or the one stored already under the id (the same
    /// bytes sent again: nothing written).
    package enum Stored {
        case created(PanoramaRecord)
        case resent(PanoramaRecord)
    }

    package func panorama(_ tenant: Int64, _ id: String) async throws -> PanoramaRecord {
        guard let panorama = try await records.readOne({ try await TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
        return panorama
    }

    /// A creation of a panorama stored already, sent again with its digest declared: the
    /// stored panorama when the digest is its own (409 otherwise); nil when there is none,
    /// or no digest was declared (the body must be read then).
    package func resent(_ tenant: Int64, _ creation: PanoramaCreation) async throws -> PanoramaRecord? {
        guard let declared = creation.declaredSHA256,
              let existing = try await records.readOne({ try await TourStore.panorama($0, tenant, creation.panoramaId) }) else { return nil }
        return try PanoramaUpload.resend(existing, digest: declared)
    }

    /// 404 unless the creation's floor, and its room when it names one, are the tenant's.
    package func checkPlace(_ tenant: Int64, _ creation: PanoramaCreation) async throws {
        _ = try await records.read { try await TourStore.panoramaPlace($0, tenant, floorId: creation.floorId, roomId: creation.roomId) }
    }

    /// Stores the panorama `creation` names from `body`: its digest (when declared, checked)
    /// and its content (the media type's signature), then its file and its row.
    package func store(_ tenant: Int64, _ creation: PanoramaCreation, body: some ByteStream) async throws -> Stored {
        let id = creation.panoramaId
        // A re-send whose digest is declared is answered without reading the body again.
        if let resent = try await resent(tenant, creation) { return .resent(resent) }
        try await checkPlace(tenant, creation)
        let key = BlobKey(tenant: tenant, kind: .panorama, id: id)
        let received = try await blobs.receive(body, toward: key)
        if let declared = creation.declaredSHA256, declared != received.sha256 {
            await blobs.discard(received)
            throw ServiceError(.digestMismatch, "the body's sha-256 is \(received.sha256), not the declared \(declared)")
        }
        do {
            try PanoramaMediaType.checkContent(creation.contentType, head: received.head)
        } catch {
            await blobs.discard(received)
            throw error
        }
        // In place before its row is committed: the row is the switch.
        return try await turns.holding([key]) {
            let placement: PanoramaPlacement
            do {
                placement = try await place(key) { try await blobs.place(received, as: key) }
            } catch {
                await blobs.discard(received)
                throw error
            }
            if case .stored(let existing) = placement {
                await blobs.discard(received)
                return .resent(try PanoramaUpload.resend(existing, digest: received.sha256))
            }
            crashPoints.reached(.panoramaPlaced)
            let stored: PanoramaRecord
            do {
                let now = clock.now()
                stored = try await records.write { db in
                    try await TourStore.insertPanorama(db, tenant, id: id, floorId: creation.floorId, roomId: creation.roomId, position: creation.position,
                                                       contentType: creation.contentType, size: received.size, sha256: received.sha256, at: now)
                }
            } catch {
                await blobs.remove(key) // the row was refused: no file without its row
                throw error
            }
            crashPoints.reached(.panoramaCommitted)
            images.stored(tenant, stored)
            return .created(stored)
        }
    }

    /// Removes panorama `id`: its row, then its file and previews.
    package func delete(_ tenant: Int64, _ id: String) async throws {
        let key = BlobKey(tenant: tenant, kind: .panorama, id: id)
        try await turns.holding([key]) {
            let now = clock.now()
            guard try await records.write({ try await TourStore.deletePanorama($0, tenant, id, at: now) }) else { throw ServiceError.notFound("panorama", id) }
            await blobs.remove(key)
            await images.remove(tenant: tenant, ids: [id])
        }
    }

    /// Gives panorama `key` its file with `put` (false when the name is taken), or finds it
    /// stored. The caller holds the panorama's turn until its commit, so a re-send arriving
    /// while the first request is still storing waits and is answered as a re-send. A name
    /// taken without a row is then a file a failed removal left: it goes, and `put` runs again.
    package func place(_ key: BlobKey, by put: () async throws -> Bool) async throws -> PanoramaPlacement {
        if try await put() { return .placed }
        if let existing = try await records.read({ try await TourStore.panorama($0, key.tenant, key.id) }) { return .stored(existing) }
        images.logger.warn("a panorama file without its row is replaced", ["panorama": key.id])
        await blobs.remove(key)
        guard try await put() else { throw ServiceError(.internal, "panorama \(key.id) cannot be placed") }
        return .placed
    }

    /// Removes panorama files after the commit that dropped their rows, in their turns (all
    /// held at once, asked about in one query); one stored again meanwhile (a new row) keeps
    /// its file.
    func removeFiles(_ keys: [BlobKey]) async {
        guard let tenant = keys.first?.tenant else { return }
        try? await turns.holding(keys) {
            let ids = keys.map(\.id)
            let storedAgain = try await records.read { try await TourStore.storedPanoramas($0, tenant, among: ids) }
            let gone = keys.filter { !storedAgain.contains($0.id) }
            await blobs.remove(gone)
            await images.remove(tenant: tenant, ids: gone.map(\.id))
        }
    }
}

/// Where a panorama's file stands once its name is asked for.
package enum PanoramaPlacement {
    /// The file has the panorama's name; its row is to be committed (or the file removed).
    case placed
    /// The panorama is stored already: this row.
    case stored(PanoramaRecord)
}

/// The idempotency of panorama ids, shared by one-shot and resumable uploads.
package enum PanoramaUpload {
    /// A panorama id arriving again: the same digest is a harmless re-send (200, nothing
    /// written), another digest a conflict.
    package static func resend(_ existing: PanoramaRecord, digest: String) throws(ServiceError) -> PanoramaRecord {
        guard existing.sha256 == digest else {
            throw ServiceError.conflict("panorama \(existing.id) is stored with another digest")
        }
        return existing
    }
}
