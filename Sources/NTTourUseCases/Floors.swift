import NTAPIModel
import NTHashing
import NTServiceModel
import NTServiceStorage

/// Floors made and read, their plans replaced and their world maps stored: each change
/// committed in one transaction, a file in place before the row that names it and removed
/// only after the commit that let it go. Knows no HTTP.
package struct Floors: Sendable {
    package let records: Records
    package let blobs: any BlobStore
    package let clock: any ServiceClock
    package let crashPoints: CrashPoints

    package init(records: Records, blobs: any BlobStore, clock: any ServiceClock, crashPoints: CrashPoints) {
        self.records = records
        self.blobs = blobs
        self.clock = clock
        self.crashPoints = crashPoints
    }

    /// Creates or changes a floor of a property.
    package func put(_ tenant: Int64, propertyId: String, floorId: String, _ input: FloorInput) async throws -> (FloorRecord, created: Bool) {
        let now = clock.now()
        return try await records.write { try await TourStore.putFloor($0, tenant, propertyId: propertyId, floorId: floorId, input, at: now) }
    }

    package func floor(_ tenant: Int64, _ id: String) async throws -> FloorRecord {
        guard let floor = try await records.read({ try await TourStore.floor($0, tenant, id) }) else { throw ServiceError.notFound("floor", id) }
        return floor
    }

    /// Sets the order of the floor's walk (`TourStore.setPanoramaOrder`): its panoramas in walk order.
    package func setPanoramaOrder(_ tenant: Int64, _ floorId: String, _ input: PanoramaOrderInput) async throws -> [PanoramaDocument] {
        let now = clock.now()
        guard let ordered = try await records.write({ try await TourStore.setPanoramaOrder($0, tenant, floorId: floorId, input.panoramaIds, at: now) }) else {
            throw ServiceError.notFound("floor", floorId)
        }
        return ordered
    }

    /// Replaces the floor's plan (its rooms, walls and placements; a world map it no longer
    /// matches is cleared): the answer the API gives.
    package func replacePlan(_ tenant: Int64, _ floorId: String, _ plan: PlanUpload) async throws -> [UInt8] {
        let now = clock.now()
        let outcome = try await records.write { try await TourStore.applyPlan($0, tenant, floorId: floorId, plan, at: now) }
        crashPoints.reached(.planCommitted)
        if let cleared = outcome.clearedWorldMap { await blobs.remove(cleared) }
        return outcome.answer
    }

    /// Stores the floor's world map from `body`; the same map again changes nothing. Returns
    /// the floor and whether it had no map before.
    package func storeWorldMap(_ tenant: Int64, _ floorId: String, body: some ByteStream) async throws -> (FloorRecord, created: Bool) {
        guard try await records.read({ try await TourStore.floor($0, tenant, floorId) }) != nil else { throw ServiceError.notFound("floor", floorId) }
        // A fresh name: in place before the row points at it; the map it replaces stays
        // until the commit says otherwise.
        let key = BlobKey(tenant: tenant, kind: .worldMap, id: "\(floorId).\(ByteEncoding.hex(randomBytes(8)))")
        let received = try await blobs.receive(body, toward: key)
        // The same map again changes nothing.
        if let floor = try? await records.read({ try await TourStore.floor($0, tenant, floorId) }), floor.worldMapSHA256 == received.sha256 {
            await blobs.discard(received)
            return (floor, false)
        }
        try await blobs.store(received, as: key)
        crashPoints.reached(.worldMapPlaced)
        let outcome: TourStore.WorldMapOutcome
        do {
            let now = clock.now()
            outcome = try await records.write { db in
                try await TourStore.setWorldMap(db, tenant, floorId: floorId, sha256: received.sha256, size: received.size, file: key.id, at: now)
            }
        } catch {
            await blobs.remove(key) // no file without its row
            throw error
        }
        crashPoints.reached(.worldMapCommitted)
        if outcome.change == .unchanged {
            await blobs.remove(key)
        } else if let replaced = outcome.replaced {
            await blobs.remove(replaced)
        }
        return (outcome.floor, outcome.change == .created)
    }
}
