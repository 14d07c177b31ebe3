import NTHTTPCore
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// Tenant tokens and grant tokens, as the API's requests present them (docs/api.md "Tenants
/// are isolated", docs/security.md "Grants"). A token is looked up by its SHA-256; a grant's on
/// every request (a revocation holds at once on every daemon), a tenant token's tenant
/// remembered (`KnownTokens`) but whether it is still unrevoked asked each time.
package struct TenantTokens: Sendable {
    package let records: Records
    package let known: KnownTokens
    package let clock: any ServiceClock

    package init(records: Records, known: KnownTokens, clock: any ServiceClock) {
        self.records = records
        self.known = known
        self.clock = clock
    }

    /// The tenant of the token, asked of the database.
    func tenant(of token: String) async throws -> Int64 {
        let digest = Secrets.hash(token)
        // A database error goes on as it is: `ServiceErrors` maps it (503, 507, 500).
        guard let tenant = try TenantStore.validToken(in: try await records.statement(TenantStore.tokenQuery(digest)), digest: digest)?.tenant else {
            throw ServiceError.unknownToken
        }
        known.remember(digest, tenant: tenant)
        return tenant
    }

    /// The grant a grant token is. An expired grant is told apart from a revoked one: a client
    /// asks its host for a fresh grant after the one, never after the other.
    func grant(_ token: String) async throws -> GrantAccess {
        let digest = Secrets.hash(token)
        switch try GrantStore.lookup(in: try await records.statement(GrantStore.lookupQuery(digest)), digest: digest, at: clock.now()) {
        case .valid(let grant): return grant
        case .expired: throw ServiceError(.grantExpired, "the grant expired: ask the host for a fresh one")
        case .revoked: throw ServiceError(.unauthorized, "the grant was revoked")
        case nil: throw ServiceError.unknownToken
        }
    }

    /// A GET with a tenant token this daemon knows: `body` runs at once as that tenant, the
    /// token's check (one statement) asked beside its reads (on PostgreSQL in the same batch as
    /// the first) and awaited before the answer leaves: a revoked token gets 401 whatever the
    /// route found. Nil when the daemon does not know the token.
    func knownRead(_ token: String, _ body: (Int64) async throws -> Response) async throws -> Response? {
        let digest = Secrets.hash(token)
        guard let tenant = known.tenant(of: digest) else { return nil }
        let check = records.prefetch(TenantStore.tokenQuery(digest))
        let stillValid = { try TenantStore.validToken(in: try await check.rows(), digest: digest)?.tenant == tenant }
        let response: Response
        do {
            response = try await body(tenant)
        } catch {
            guard try await stillValid() else { throw ServiceError.unknownToken }
            throw error
        }
        guard try await stillValid() else { throw ServiceError.unknownToken }
        return response
    }
}

/// Every `/v1` route's authentication: the bearer token's principal (`APIPrincipal`), or 401
/// before any body is read. A grant's token (`ntg_`) is looked up on every request. A GET with
/// a tenant token this daemon knows goes on at once (`TenantTokens.knownRead`). A GET writes
/// nothing.
package struct APIAuthentication: Sendable {
    package let tokens: TenantTokens

    package init(tokens: TenantTokens) {
        self.tokens = tokens
    }

    package func authenticate(_ request: Request, _ body: @Sendable (APIPrincipal) async throws -> Response) async throws -> Response {
        let token = try BearerToken.of(request)
        if token.hasPrefix(GrantStore.tokenPrefix) {
            return try await body(.grant(try await tokens.grant(token)))
        }
        if request.method == .get, let answered = try await tokens.knownRead(token, { try await body(.tenant($0)) }) {
            return answered
        }
        return try await body(.tenant(try await tokens.tenant(of: token)))
    }
}

extension ServiceError {
    package static let unknownToken = ServiceError(.unauthorized, "unknown or revoked token")
}

/// `Authorization: Bearer <token>` (RFC 6750 §2.1); the scheme is case-insensitive (RFC 9110
/// §11.1). Read as bytes: it is on every request's way.
package enum BearerToken {
    package static func parse(_ header: String) -> String? {
        let bytes = Array(header.utf8)
        guard bytes.count > 7, bytes[6] == UInt8(ascii: " "),
              zip(bytes[0..<6], "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        let token = bytes[7...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let end = token.lastIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        guard let end else { return nil }
        return String(decoding: token[..<(end + 1)], as: UTF8.self)
    }

    /// The request's bearer token, or 401.
    static func of(_ request: Request) throws(ServiceError) -> String {
        guard let header = request.headers["authorization"] else { throw ServiceError(.unauthorized, "a bearer token is required") }
        guard let token = parse(header) else { throw ServiceError(.unauthorized, "Authorization must be \"Bearer <token>\"") }
        return token
    }
}
