import Foundation
import NTAPIModel
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// A floor's creation or change: `PUT /v1/properties/{propertyId}/floors/{floorId}`.
struct PutFloor: Command {
    let propertyId: String
    let floorId: String
    var target: AccessTarget? { .property(propertyId) }

    static let parse: @Sendable (Request) throws -> PutFloor = { PutFloor(propertyId: try $0.uuid("propertyId"), floorId: try $0.uuid("floorId")) }
}

/// A floor's plan replaced (`PUT /v1/floors/{floorId}/plan`): its body JSON when it says.
struct PutPlan: Command {
    let floorId: String
    var target: AccessTarget? { .floor(floorId) }

    static let parse: @Sendable (Request) throws -> PutPlan = { request in
        // Content-Type must say JSON when it is given (415 otherwise: docs/api.md asks it of plans).
        if let type = request.headers["content-type"] {
            let media = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            guard media == "application/json" || media.hasSuffix("+json") else {
                throw ServiceError(.unsupportedMediaType, "the body must be application/json, not \"\(media.prefix(100))\"")
            }
        }
        return PutPlan(floorId: try request.uuid("floorId"))
    }
}

/// A floor's world map stored (`PUT /v1/floors/{floorId}/worldmap`): octets.
struct PutWorldMap: Command {
    let floorId: String
    var target: AccessTarget? { .floor(floorId) }

    static let parse: @Sendable (Request) throws -> PutWorldMap = { request in
        if let type = request.headers["content-type"], !type.lowercased().hasPrefix("application/octet-stream") {
            throw ServiceError(.unsupportedMediaType, "a world map is application/octet-stream")
        }
        return PutWorldMap(floorId: try request.uuid("floorId"))
    }
}

/// Floors, plans and world maps (docs/api.md "Floors, plans and world maps").
enum FloorRoutes {
    static func add(to api: inout APIRoutes, settings: APISettings, floors: Floors, contents: ContentAnswers) {
        api.add(.put, "/v1/properties/{propertyId}/floors/{floorId}", .scoped(.capture), bodyLimit: Int64(settings.maxJsonBodyBytes),
                parse: PutFloor.parse) { command, principal, request in
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try FloorInput.parse(body, maxDepth: settings.maxJsonDepth) }
            let (floor, created) = try await floors.put(principal.tenant, propertyId: command.propertyId, floorId: command.floorId, input)
            return .document(created ? .created : .ok, floor.document)
        }

        let floor = Addressed.by("floorId", AccessTarget.floor)
        api.add(.get, "/v1/floors/{floorId}", .scoped(.read), parse: floor) { command, principal, _ in
            .document(.ok, try await floors.floor(principal.tenant, command.id).document)
        }

        api.add(.put, "/v1/floors/{floorId}/plan", .scoped(.capture), bodyLimit: Int64(settings.maxPlanBodyBytes), parse: PutPlan.parse) { command, principal, request in
            let plan = try PlanUpload.parse(try await request.body.collect(upTo: request.bodyLimit), maxDepth: settings.maxJsonDepth,
                                            maxCoordinate: Double(settings.maxPlanCoordinateMetres))
            return .json(.ok, try await floors.replacePlan(principal.tenant, command.floorId, plan))
        }

        api.add(.put, "/v1/floors/{floorId}/panorama-order", .scoped(.capture), bodyLimit: Int64(settings.maxJsonBodyBytes), parse: floor) { command, principal, request in
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try PanoramaOrderInput.parse(body, maxDepth: settings.maxJsonDepth) }
            return .document(.ok, PanoramaListDocument(items: try await floors.setPanoramaOrder(principal.tenant, command.id, input)))
        }

        api.add(.get, "/v1/floors/{floorId}/worldmap", .scoped(.read), parse: floor) { command, principal, request in
            let floor = try await floors.floor(principal.tenant, command.id)
            guard let key = floor.worldMapKey(principal.tenant), let content = floor.worldMap else {
                throw ServiceError(.notFound, "floor \(command.id) has no world map")
            }
            return try await contents.content(key, content, for: request, sender: .storeMayRedirect)
        }

        api.add(.put, "/v1/floors/{floorId}/worldmap", .scoped(.capture), bodyLimit: Int64(settings.maxWorldMapBytes), parse: PutWorldMap.parse) { command, principal, request in
            let (floor, created) = try await floors.storeWorldMap(principal.tenant, command.floorId, body: request.body)
            return .document(created ? .created : .ok, floor.document)
        }
    }
}
