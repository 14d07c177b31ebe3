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

/// A property's creation or change: `PUT /v1/properties/{propertyId}`.
struct PutProperty: Command {
    let id: String
    var target: AccessTarget? { .property(id) }

    static let parse: @Sendable (Request) throws -> PutProperty = { PutProperty(id: try $0.uuid("propertyId")) }
}

/// Properties, their status and tours (docs/api.md "Properties").
enum PropertyRoutes {
    static func add(to api: inout APIRoutes, settings: APISettings, properties: Properties) {
        api.add(.put, "/v1/properties/{propertyId}", .propertyCreation, bodyLimit: Int64(settings.maxJsonBodyBytes), parse: PutProperty.parse) { command, principal, request in
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try PropertyInput.parse(body, maxDepth: settings.maxJsonDepth) }
            let (property, created) = try await properties.put(principal.tenant, command.id, input, joining: principal.grant)
            return .document(created ? .created : .ok, property)
        }

        api.add(.get, "/v1/properties", .propertyList, parse: Addressed.nothing) { _, principal, request in
            let (limit, after) = try request.pageQuery()
            let (page, next) = try await properties.list(principal.tenant, grant: principal.grant?.id, limit: limit, after: after)
            return .document(.ok, PropertyPage(items: page, next: next))
        }

        let property = Addressed.by("propertyId", AccessTarget.property)
        api.add(.get, "/v1/properties/{propertyId}", .scoped(.read), readsOneRecord: true, parse: property) { command, principal, _ in
            .document(.ok, try await properties.property(principal.tenant, command.id))
        }

        api.add(.delete, "/v1/properties/{propertyId}", .tenantOnTarget, parse: property) { command, principal, _ in
            try await properties.delete(principal.tenant, command.id)
            return Response(status: .noContent)
        }

        api.add(.get, "/v1/properties/{propertyId}/status", .scoped(.read), parse: property) { command, principal, _ in
            .json(.ok, try await properties.status(principal.tenant, command.id))
        }

        api.add(.get, "/v1/tours/{tourId}", .scoped(.read), parse: Addressed.by("tourId", AccessTarget.tour)) { command, principal, _ in
            .json(.ok, try await properties.tour(principal.tenant, tourId: command.id))
        }
    }
}
