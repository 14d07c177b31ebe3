import Hashing
import HTTPCore

/// Floors, plans and world maps (API.md "Floors, plans and world maps").
enum FloorRoutes {
    static func add(to table: inout RouteTable, _ api: Endpoints) {
        let context = api.context
        let jsonLimit = Int64(context.config.maxJsonBodyBytes)

        table.add(.put, "/v1/properties/{propertyId}/floors/{floorId}", bodyLimit: jsonLimit, api.json { request, tenant, body in
            let propertyId = try request.uuid("propertyId")
            let floorId = try request.uuid("floorId")
            let input = try FloorInput.parse(body)
            let (floor, created) = try context.write { try TourStore.putFloor($0, tenant, propertyId: propertyId, floorId: floorId, input) }
            return .json(created ? .created : .ok, encodeJSON(floor.json))
        })

        table.add(.get, "/v1/floors/{floorId}", api.plain { request, tenant in
            let id = try request.uuid("floorId")
            guard let floor = try context.read({ try TourStore.floor($0, tenant, id) }) else { throw ServiceError.notFound("floor", id) }
            return .json(.ok, encodeJSON(floor.json))
        })

        table.add(.put, "/v1/floors/{floorId}/plan", bodyLimit: Int64(context.config.maxPlanBodyBytes), api.json(typed: true) { request, tenant, body in
            let floorId = try request.uuid("floorId")
            let plan = try PlanInput.parse(body)
            let outcome = try context.write { try TourStore.applyPlan($0, tenant, floorId: floorId, plan) }
            if let cleared = outcome.clearedWorldMap { context.blobs.remove(cleared) }
            return .json(.ok, outcome.answer)
        })

        table.add(.put, "/v1/floors/{floorId}/worldmap", bodyLimit: Int64(context.config.maxWorldMapBytes), api.upload { request, tenant in
            let floorId = try request.uuid("floorId")
            if let type = request.headers["content-type"], !type.lowercased().hasPrefix("application/octet-stream") {
                throw ServiceError(.unsupportedMediaType, "a world map is application/octet-stream")
            }
            guard try context.read({ try TourStore.floor($0, tenant, floorId) }) != nil else { throw ServiceError.notFound("floor", floorId) }
            return .store { incoming in
                let digest = ByteEncoding.hex(try incoming.sync())
                let key = BlobKey(tenant: tenant, kind: .worldMap, id: floorId)
                let (change, floor) = try context.write { db -> (TourStore.WorldMapChange, FloorRecord?) in
                    guard try TourStore.floor(db, tenant, floorId)?.worldMapSHA256 != digest else {
                        return (.unchanged, try TourStore.floor(db, tenant, floorId))
                    }
                    // In place (replacing any older map atomically) before the row says so.
                    try context.blobs.commit(incoming, as: key)
                    let change = try TourStore.setWorldMap(db, tenant, floorId: floorId, sha256: digest, size: incoming.size)
                    return (change, try TourStore.floor(db, tenant, floorId))
                }
                guard let floor else { throw ServiceError.notFound("floor", floorId) }
                return .json(change == .created ? .created : .ok, encodeJSON(floor.json))
            }
        })
    }
}
