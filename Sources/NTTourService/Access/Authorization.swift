import NTAPIModel
import NTHTTPCore

/// The grant a request's bearer token is (set by `Authentication`); none for a tenant token.
enum HeldGrant: RequestAttribute {
    typealias Value = GrantAccess
}

extension Request {
    /// The grant the request was made with; nil for a tenant token.
    var grant: GrantAccess? { attributes[HeldGrant.self] }
}

/// A route's `Access` rule, applied to a request made with a grant (a tenant token goes on at
/// once: it may use every route). A refusal is 404 where the grant cannot see the property
/// (its existence does not leak), else 403 naming what is missing.
struct Authorization: Middleware {
    let access: Access
    let context: ServiceContext

    func respond(to request: Request, next: RequestResponder) async throws -> Response {
        guard let grant = request.grant else { return try await next(request) }
        switch access {
        case .anyCredential, .propertyList, .uploadCapability:
            break
        case .tenant(let place):
            if let place { _ = try await visibleProperty(place, grant, request) }
            throw ServiceError(.forbidden, "this needs a tenant token; a grant (\(Self.names(grant.scopes))) cannot use it")
        case .scoped(let scope, let place):
            _ = try await visibleProperty(place, grant, request)
            try Self.require(scope, grant)
        case .propertyCreation:
            try Self.require(.capture, grant)
        case .panoramaCreation:
            // The floor and panorama are checked on the parsed creation (`check`).
            try Self.require(.capture, grant)
        }
        return try await next(request)
    }

    /// The property of the route's `place`, when the grant holds it; else 404, as for a thing
    /// the tenant does not have.
    private func visibleProperty(_ place: PropertyPlace, _ grant: GrantAccess, _ request: Request) async throws -> String {
        let id = try request.uuid(place.rawValue)
        return try await visibleProperty(place, id, grant)
    }

    private func visibleProperty(_ place: PropertyPlace, _ id: String, _ grant: GrantAccess) async throws -> String {
        let tenant = grant.tenant
        let property: String? = place == .property ? id : try await context.readOne { try await GrantStore.propertyId($0, tenant, of: place, id) }
        guard let property, grant.propertyIds.contains(property) else { throw ServiceError.notFound(place.noun, id) }
        return property
    }

    /// A grant's panorama creation (`GuardedRoutes.addCreation`): the floor it goes on must
    /// be on the grant's properties, and so must a panorama already stored under its id.
    func check(_ creation: PanoramaCreation, _ grant: GrantAccess) async throws {
        _ = try await visibleProperty(.floor, creation.floorId, grant)
        let (tenant, id) = (grant.tenant, creation.panoramaId)
        if let property = try await context.readOne({ try await GrantStore.propertyId($0, tenant, of: .panorama, id) }),
           !grant.propertyIds.contains(property) {
            throw ServiceError.notFound(PropertyPlace.panorama.noun, id)
        }
    }

    private static func require(_ scope: GrantScope, _ grant: GrantAccess) throws(ServiceError) {
        guard grant.has(scope) else {
            throw ServiceError(.forbidden, "this needs the \(scope.rawValue) scope; the grant has \(names(grant.scopes))")
        }
    }

    private static func names(_ scopes: [GrantScope]) -> String {
        scopes.map(\.rawValue).joined(separator: ", ")
    }
}
