import NTAPIModel
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// A share link made of a tour: `POST /v1/tours/{tourId}/shares`.
struct CreateShare: Command {
    let tourId: String
    var target: AccessTarget? { .tour(tourId) }

    static let parse: @Sendable (Request) throws -> CreateShare = { CreateShare(tourId: try $0.uuid("tourId")) }
}

/// Share links of tours (docs/api.md "Sharing a tour"). The pages a link opens are the viewer's.
enum ShareRoutes {
    static func add(to api: inout APIRoutes, settings: APISettings, shares: Shares) {
        let (limits, maxJsonDepth) = (settings.shares, settings.maxJsonDepth)
        api.add(.post, "/v1/tours/{tourId}/shares", .tenantOnTarget, bodyLimit: Int64(settings.maxJsonBodyBytes), parse: CreateShare.parse) { command, principal, request in
            let (tenant, tourId) = (principal.tenant, command.tourId)
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in
                try ShareInput.parse(body, allowed: limits.lifetimes, defaultSeconds: limits.defaultLifetime, maxOrigins: limits.maxFrameAncestors,
                                     maxDepth: maxJsonDepth)
            }
            guard let share = try await shares.create(tenant, tourId: tourId, input) else {
                throw ServiceError.notFound("tour", tourId)
            }
            return .document(.created, share)
        }

        api.add(.get, "/v1/tours/{tourId}/shares", .tenantOnTarget, parse: Addressed.by("tourId", AccessTarget.tour)) { command, principal, request in
            let (tenant, tourId) = (principal.tenant, command.id)
            let (limit, after) = try request.pageQuery()
            guard let (page, more) = try await shares.list(tenant, tourId: tourId, limit: limit, after: after) else {
                throw ServiceError.notFound("tour", tourId)
            }
            return .document(.ok, Page(items: page, next: more ? page.last?.id : nil))
        }

        api.add(.get, "/v1/shares/{shareId}/stats", .tenant, parse: Addressed.nothing) { _, principal, request in
            let (tenant, id) = (principal.tenant, try request.uuid("shareId"))
            guard let stats = try await shares.stats(tenant, id) else {
                throw ServiceError.notFound("share", id)
            }
            return .document(.ok, stats)
        }

        api.add(.delete, "/v1/shares/{shareId}", .tenant, parse: Addressed.nothing) { _, principal, request in
            let (tenant, id) = (principal.tenant, try request.uuid("shareId"))
            guard try await shares.revoke(tenant, id) != nil else {
                throw ServiceError.notFound("share", id)
            }
            return Response(status: .noContent)
        }
    }
}
