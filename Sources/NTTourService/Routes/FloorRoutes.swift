import NTAPIModel
import Foundation
import NTHTTPCore

/// Floors, plans and world maps (docs/api.md "Floors, plans and world maps").
enum FloorRoutes {
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext) {
        let jsonLimit = Int64(context.config.maxJsonBodyBytes)
        let floors = Floors(context: context)

        table.add(.put, "/v1/properties/{propertyId}/floors/{floorId}", .scoped(.capture, .property), bodyLimit: jsonLimit) { request in
            let (tenant, propertyId, floorId) = (request.tenant, try request.uuid("propertyId"), try request.uuid("floorId"))
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try FloorInput.parse(body, maxDepth: context.config.maxJsonDepth) }
            let (floor, created) = try await context.write { try await TourStore.putFloor($0, tenant, propertyId: propertyId, floorId: floorId, input, at: context.clock.now()) }
            return .document(created ? .created : .ok, floor.document)
        }

        table.add(.get, "/v1/floors/{floorId}", .scoped(.read, .floor)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("floorId"))
            guard let floor = try await context.read({ try await TourStore.floor($0, tenant, id) }) else { throw ServiceError.notFound("floor", id) }
            return .document(.ok, floor.document)
        }

        table.add(.put, "/v1/floors/{floorId}/plan", .scoped(.capture, .floor), bodyLimit: Int64(context.config.maxPlanBodyBytes)) { request in
            try requireJSON(request)
            let (tenant, floorId) = (request.tenant, try request.uuid("floorId"))
            let plan = try PlanUpload.parse(try await request.body.collect(upTo: request.bodyLimit), maxDepth: context.config.maxJsonDepth,
                                            maxCoordinate: Double(context.config.maxPlanCoordinateMetres))
            return .json(.ok, try await floors.replacePlan(tenant, floorId, plan))
        }

        table.add(.get, "/v1/floors/{floorId}/worldmap", .scoped(.read, .floor)) { request in
            let (tenant, floorId) = (request.tenant, try request.uuid("floorId"))
            guard let floor = try await context.read({ try await TourStore.floor($0, tenant, floorId) }) else { throw ServiceError.notFound("floor", floorId) }
            guard let key = floor.worldMapKey(tenant), let content = floor.worldMap else {
                throw ServiceError(.notFound, "floor \(floorId) has no world map")
            }
            return try await context.content(key, content, for: request, sender: .storeMayRedirect)
        }

        table.add(.put, "/v1/floors/{floorId}/worldmap", .scoped(.capture, .floor), bodyLimit: Int64(context.config.maxWorldMapBytes)) { request in
            let (tenant, floorId) = (request.tenant, try request.uuid("floorId"))
            if let type = request.headers["content-type"], !type.lowercased().hasPrefix("application/octet-stream") {
                throw ServiceError(.unsupportedMediaType, "a world map is application/octet-stream")
            }
            let (floor, created) = try await floors.storeWorldMap(tenant, floorId, body: request.body)
            return .document(created ? .created : .ok, floor.document)
        }
    }

    /// Content-Type must say JSON when it is given (415 otherwise: docs/api.md asks it of plans).
    private static func requireJSON(_ request: Request) throws(ServiceError) {
        guard let type = request.headers["content-type"] else { return }
        let media = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard media == "application/json" || media.hasSuffix("+json") else {
            throw ServiceError(.unsupportedMediaType, "the body must be application/json, not \"\(media.prefix(100))\"")
        }
    }
}
