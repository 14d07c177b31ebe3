import NTAPIModel
import NTHTTPCore

/// Grants and tenant tokens, made and revoked by the tenant over HTTP (docs/api.md "Grants and
/// tokens"). Only a tenant token may call these.
enum GrantRoutes {
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext) {
        let config = context.config
        let lifetimes = config.grantMinSeconds...config.grantMaxSeconds

        table.add(.post, "/v1/grants", .tenant(nil), bodyLimit: Int64(config.maxJsonBodyBytes)) { request in
            let tenant = request.tenant
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in
                try GrantInput.parse(body, allowed: lifetimes, maxProperties: config.grantMaxProperties, maxDepth: config.maxJsonDepth)
            }
            guard let grant = try await context.write({ try await GrantStore.create($0, tenant, input, cap: config.grantsPerTenant, at: context.clock.now()) }) else {
                throw ServiceError.conflict("the tenant holds \(config.grantsPerTenant) live grants (grantsPerTenant): revoke one, or let one expire")
            }
            return .document(.created, grant)
        }

        table.add(.get, "/v1/grants", .tenant(nil)) { request in
            let tenant = request.tenant
            let (limit, after) = try request.pageQuery()
            let (items, more) = try await context.read { try await GrantStore.grants($0, tenant, limit: limit, after: after, at: context.clock.now()) }
            return .document(.ok, Page(items: items, next: more ? items.last?.id : nil))
        }

        table.add(.delete, "/v1/grants/{grantId}", .tenant(nil)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("grantId"))
            guard try await context.write({ try await GrantStore.revoke($0, tenant, id: id, at: context.clock.now()) }) else {
                throw ServiceError.notFound("unrevoked grant", id)
            }
            return Response(status: .noContent)
        }

        // It takes no parameters: no body, or an empty JSON object (what HTTP libraries send
        // for a JSON POST without fields).
        table.add(.post, "/v1/tokens", .tenant(nil), bodyLimit: Int64(config.maxJsonBodyBytes)) { request in
            let tenant = request.tenant
            let body = try await request.body.collect(upTo: request.bodyLimit)
            if !body.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
                guard let members = (try? JSONReader.parse(body, maxDepth: config.maxJsonDepth))?.members, members.isEmpty else {
                    throw ServiceError.badRequest("POST /v1/tokens takes no parameters: send no body, or {}")
                }
            }
            guard let token = try await context.write({ try await TenantStore.createToken($0, tenant: tenant, cap: config.tokensPerTenant, at: context.clock.now()) }) else {
                throw ServiceError.conflict("the tenant holds \(config.tokensPerTenant) unrevoked tokens (tokensPerTenant): revoke one first")
            }
            return .document(.created, token)
        }

        table.add(.get, "/v1/tokens", .tenant(nil)) { request in
            let tenant = request.tenant
            let limit = try request.pageLimit()
            let after: Int64 = try request.queryParameter("after").map { text throws(ServiceError) -> Int64 in
                guard let id = Int64(text), id >= 0 else { throw ServiceError.badRequest("after must be a token id") }
                return id
            } ?? 0
            let (items, more) = try await context.readOne { try await TenantStore.tokens($0, tenant: tenant, limit: limit, after: after) }
            return .document(.ok, Page(items: items, next: more ? items.last?.id : nil))
        }

        table.add(.delete, "/v1/tokens/{tokenId}", .tenant(nil)) { request in
            let tenant = request.tenant
            guard let id = request.parameter("tokenId").flatMap({ Int64($0) }) else { throw ServiceError.notFound("token", request.parameter("tokenId") ?? "") }
            switch try await context.write({ try await TenantStore.revoke($0, tenant: tenant, id: id, at: context.clock.now()) }) {
            case .revoked: return Response(status: .noContent)
            case .notFound: throw ServiceError.notFound("unrevoked token", String(id))
            case .lastToken: throw ServiceError.conflict("token \(id) is the tenant's last: make another first (POST /v1/tokens)")
            }
        }
    }
}

extension ServiceContext {
    /// Grants expired `grantKeepDays` ago go with the sweep (those no upload names).
    func sweepExpiredGrants() async {
        let cutoff = clock.unixSeconds - Int64(config.grantKeepDays) * 86_400
        do {
            let removed = try await write { try await GrantStore.deleteExpired($0, before: cutoff) }
            if removed > 0 { logger.info("expired grants removed", ["count": String(removed)]) }
        } catch {
            failed("the expired grants' sweep failed", error)
        }
    }
}
