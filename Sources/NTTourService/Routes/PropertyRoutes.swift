import NTAPIModel
import Foundation
import NTHTTPCore

/// Properties, their status and tours (docs/api.md "Properties").
enum PropertyRoutes {
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext) {
        let jsonLimit = Int64(context.config.maxJsonBodyBytes)

        table.add(.put, "/v1/properties/{propertyId}", .propertyCreation, bodyLimit: jsonLimit) { request in
            let (tenant, id) = (request.tenant, try request.uuid("propertyId"))
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try PropertyInput.parse(body, maxDepth: context.config.maxJsonDepth) }
            let grant = request.grant
            let (property, created) = try await context.write { db in
                let put = try await TourStore.putProperty(db, tenant, id, input, at: context.clock.now())
                // A grant's capture: a property it creates joins it; one it cannot see is not its
                // to change (decided here, in the transaction that would change it).
                if let grant, !grant.propertyIds.contains(id) {
                    guard put.created else { throw ServiceError.notFound("property", id) }
                    try await GrantStore.join(db, tenant, grant: grant.id, property: id)
                }
                return put
            }
            return .document(created ? .created : .ok, property)
        }

        table.add(.get, "/v1/properties", .propertyList) { request in
            let (tenant, grant) = (request.tenant, request.grant?.id)
            let (limit, after) = try request.pageQuery()
            let (page, next) = try await context.readOne { try await TourStore.properties($0, tenant, grant: grant, limit: limit, after: after) }
            return .document(.ok, PropertyPage(items: page, next: next))
        }

        table.add(.get, "/v1/properties/{propertyId}", .scoped(.read, .property)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("propertyId"))
            guard let property = try await context.readOne({ try await TourStore.property($0, tenant, id) }) else { throw ServiceError.notFound("property", id) }
            return .document(.ok, property)
        }

        table.add(.delete, "/v1/properties/{propertyId}", .tenant(.property)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("propertyId"))
            guard let files = try await context.write({ try await TourStore.deleteProperty($0, tenant, id, at: context.clock.now()) }) else { throw ServiceError.notFound("property", id) }
            // After the commit: a crash before this leaves files with no row, swept at start-up.
            await context.blobs.remove(files.filter { $0.kind != .panorama })
            await context.removePanoramaFiles(files.filter { $0.kind == .panorama })
            return Response(status: .noContent)
        }

        table.add(.get, "/v1/properties/{propertyId}/status", .scoped(.read, .property)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("propertyId"))
            guard let status = try await context.read({ db in try await TourStore.status(db, tenant, id).map(\.jsonBytes) }) else {
                throw ServiceError.notFound("property", id)
            }
            return .json(.ok, status)
        }

        table.add(.get, "/v1/tours/{tourId}", .scoped(.read, .tour)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("tourId"))
            guard let tour = try await context.read({ db in try await TourStore.tour(db, tenant, tourId: id).map(\.jsonBytes) }) else {
                throw ServiceError.notFound("tour", id)
            }
            return .json(.ok, tour)
        }
    }
}
