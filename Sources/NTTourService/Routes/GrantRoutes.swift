import NTAPIModel
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// Grants and tenant tokens, made and revoked by the tenant over HTTP (docs/api.md "Grants and
/// tokens"). Only a tenant token may call these.
enum GrantRoutes {
    static func add(to api: inout APIRoutes, settings: APISettings, credentials: Credentials) {
        let (lifetimes, maxJsonDepth) = (settings.grantLifetimes, settings.maxJsonDepth)

        api.add(.post, "/v1/grants", .tenant, bodyLimit: Int64(settings.maxJsonBodyBytes), parse: Addressed.nothing) { _, principal, request in
            let tenant = principal.tenant
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in
                try GrantInput.parse(body, allowed: lifetimes, maxProperties: settings.grantMaxProperties, maxDepth: maxJsonDepth)
            }
            guard let grant = try await credentials.createGrant(tenant, input) else {
                throw ServiceError.conflict("the tenant holds \(settings.grantsPerTenant) live grants (grantsPerTenant): revoke one, or let one expire")
            }
            return .document(.created, grant)
        }

        api.add(.get, "/v1/grants", .tenant, parse: Addressed.nothing) { _, principal, request in
            let tenant = principal.tenant
            let (limit, after) = try request.pageQuery()
            let (items, more) = try await credentials.grants(tenant, limit: limit, after: after)
            return .document(.ok, Page(items: items, next: more ? items.last?.id : nil))
        }

        api.add(.delete, "/v1/grants/{grantId}", .tenant, parse: Addressed.nothing) { _, principal, request in
            let (tenant, id) = (principal.tenant, try request.uuid("grantId"))
            guard try await credentials.revokeGrant(tenant, id) else {
                throw ServiceError.notFound("unrevoked grant", id)
            }
            return Response(status: .noContent)
        }

        // It takes no parameters: no body, or an empty JSON object (what HTTP libraries send
        // for a JSON POST without fields).
        api.add(.post, "/v1/tokens", .tenant, bodyLimit: Int64(settings.maxJsonBodyBytes), parse: Addressed.nothing) { _, principal, request in
            let tenant = principal.tenant
            let body = try await request.body.collect(upTo: request.bodyLimit)
            if !body.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
                guard let members = (try? JSONReader.parse(body, maxDepth: maxJsonDepth))?.members, members.isEmpty else {
                    throw ServiceError.badRequest("POST /v1/tokens takes no parameters: send no body, or {}")
                }
            }
            guard let token = try await credentials.createToken(tenant) else {
                throw ServiceError.conflict("the tenant holds \(settings.tokensPerTenant) unrevoked tokens (tokensPerTenant): revoke one first")
            }
            return .document(.created, token)
        }

        api.add(.get, "/v1/tokens", .tenant, parse: Addressed.nothing) { _, principal, request in
            let tenant = principal.tenant
            let limit = try request.pageLimit()
            let after: Int64 = try request.queryParameter("after").map { text throws(ServiceError) -> Int64 in
                guard let id = Int64(text), id >= 0 else { throw ServiceError.badRequest("after must be a token id") }
                return id
            } ?? 0
            let (items, more) = try await credentials.tokens(tenant, limit: limit, after: after)
            return .document(.ok, Page(items: items, next: more ? items.last?.id : nil))
        }

        api.add(.delete, "/v1/tokens/{tokenId}", .tenant, parse: Addressed.nothing) { _, principal, request in
            let tenant = principal.tenant
            guard let id = request.parameter("tokenId").flatMap({ Int64($0) }) else { throw ServiceError.notFound("token", request.parameter("tokenId") ?? "") }
            switch try await credentials.revokeToken(tenant, id) {
            case .revoked: return Response(status: .noContent)
            case .notFound: throw ServiceError.notFound("unrevoked token", String(id))
            case .lastToken: throw ServiceError.conflict("token \(id) is the tenant's last: make another first (POST /v1/tokens)")
            }
        }
    }
}
