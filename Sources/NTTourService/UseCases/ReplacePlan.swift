import NTAPIModel
import NTHashing

/// A floor's plan replaced and its world map stored: each change committed in one
/// transaction, a file in place before the row that names it and removed only after the
/// commit that let it go. Knows no HTTP.
struct Floors: Sendable {
    let context: ServiceContext

    /// Replaces the floor's plan (its rooms, walls and placements; a world map it no longer
    /// matches is cleared): the answer the API gives.
    func replacePlan(_ tenant: Int64, _ floorId: String, _ plan: PlanUpload) async throws -> [UInt8] {
        let outcome = try await context.write { try await TourStore.applyPlan($0, tenant, floorId: floorId, plan, at: context.clock.now()) }
        context.crashPoints.reached(.planCommitted)
        if let cleared = outcome.clearedWorldMap { await context.blobs.remove(cleared) }
        return outcome.answer
    }

    /// Stores the floor's world map from `body`; the same map again changes nothing. Returns
    /// the floor and whether it had no map before.
    func storeWorldMap(_ tenant: Int64, _ floorId: String, body: some ByteStream) async throws -> (FloorRecord, created: Bool) {
        guard try await context.read({ try await TourStore.floor($0, tenant, floorId) }) != nil else { throw ServiceError.notFound("floor", floorId) }
        // A fresh name: in place before the row points at it; the map it replaces stays
        // until the commit says otherwise.
        let key = BlobKey(tenant: tenant, kind: .worldMap, id: "\(floorId).\(ByteEncoding.hex(randomBytes(8)))")
        let received = try await context.blobs.receive(body, toward: key)
        // The same map again changes nothing.
        if let floor = try? await context.read({ try await TourStore.floor($0, tenant, floorId) }), floor.worldMapSHA256 == received.sha256 {
            await context.blobs.discard(received)
            return (floor, false)
        }
        try await context.blobs.store(received, as: key)
        context.crashPoints.reached(.worldMapPlaced)
        let outcome: TourStore.WorldMapOutcome
        do {
            outcome = try await context.write { db in
                try await TourStore.setWorldMap(db, tenant, floorId: floorId, sha256: received.sha256, size: received.size, file: key.id, at: context.clock.now())
            }
        } catch {
            await context.blobs.remove(key) // no file without its row
            throw error
        }
        context.crashPoints.reached(.worldMapCommitted)
        if outcome.change == .unchanged {
            await context.blobs.remove(key)
        } else if let replaced = outcome.replaced {
            await context.blobs.remove(replaced)
        }
        return (outcome.floor, outcome.change == .created)
    }
}
