import Foundation
import HTTPCore

/// Properties, their status and tours (API.md "Properties").
enum PropertyRoutes {
    static func add(to table: inout RouteTable, _ api: Endpoints) {
        let context = api.context
        let jsonLimit = Int64(context.config.maxJsonBodyBytes)

        table.add(.put, "/v1/properties/{propertyId}", bodyLimit: jsonLimit, api.json { request, tenant, body in
            let id = try request.uuid("propertyId")
            let input = try PropertyInput.parse(body)
            let (property, created) = try context.write { try TourStore.putProperty($0, tenant, id, input) }
            return .json(created ? .created : .ok, encodeJSON(property.json))
        })

        table.add(.get, "/v1/properties", api.plain { request, tenant in
            let limit: Int
            if let text = request.queryParameter("limit") {
                guard let value = Int(text), (1...200).contains(value) else { throw ServiceError.badRequest("limit must be 1 to 200") }
                limit = value
            } else {
                limit = 50
            }
            let after = try request.queryParameter("after").map { text throws(ServiceError) in try Identifier.validated(text, "after") }
            let (page, next) = try context.read { try TourStore.properties($0, tenant, limit: limit, after: after) }
            return .json(.ok, encodeJSON(["items": page.map(\.json), "next": next ?? NSNull()] as [String: Any]))
        })

        table.add(.get, "/v1/properties/{propertyId}", api.plain { request, tenant in
            let id = try request.uuid("propertyId")
            guard let property = try context.read({ try TourStore.property($0, tenant, id) }) else { throw ServiceError.notFound("property", id) }
            return .json(.ok, encodeJSON(property.json))
        })

        table.add(.delete, "/v1/properties/{propertyId}", api.plain { request, tenant in
            let id = try request.uuid("propertyId")
            guard let files = try context.write({ try TourStore.deleteProperty($0, tenant, id) }) else { throw ServiceError.notFound("property", id) }
            // After the commit: a crash before this leaves files with no row, swept at start-up.
            for file in files { context.blobs.remove(file) }
            return Response(status: .noContent)
        })

        table.add(.get, "/v1/properties/{propertyId}/status", api.plain { request, tenant in
            let id = try request.uuid("propertyId")
            guard let status = try context.read({ try TourStore.status($0, tenant, id) }) else { throw ServiceError.notFound("property", id) }
            return .json(.ok, encodeJSON(status))
        })

        table.add(.get, "/v1/tours/{tourId}", api.plain { request, tenant in
            let id = try request.uuid("tourId")
            guard let tour = try context.read({ try TourStore.tour($0, tenant, tourId: id) }) else { throw ServiceError.notFound("tour", id) }
            return .json(.ok, encodeJSON(tour))
        })
    }
}
