import NTAPIModel

/// A grant the server made (docs/api.md "Grants and tokens"): its token is shown this once.
public struct IssuedGrant: Sendable, Equatable {
    public let id: String
    public let token: String
    public let scopes: [String]
    public let propertyIds: [String]
    public let expiresAt: String
}

extension NoughtyTours {
    /// Asks the server for a grant on `propertyIds` with `scopes` ("capture", "read") for
    /// `seconds`: what a host's backend hands a capture device instead of the tenant's token.
    /// Only a tenant token may ask (else the server's 403).
    public func createGrant(propertyIds: [String], scopes: [String], expiresInSeconds seconds: Int) async throws(NoughtyToursError) -> IssuedGrant {
        var parsed: [GrantScope] = []
        for scope in scopes {
            guard let known = GrantScope(rawValue: scope) else { throw .invalidInput("a grant's scope is capture or read, not \"\(scope)\"") }
            parsed.append(known)
        }
        for id in propertyIds where !Identifier.isValid(id) { throw .invalidInput("\(id) is not a property id (a lowercase UUID)") }
        var writer = JSONWriter()
        writer.object { writer in
            writer.key("expiresInSeconds"); writer.int(seconds)
            writer.key("propertyIds"); writer.array(propertyIds) { $0.string($1) }
            writer.key("scopes"); writer.array(parsed) { $0.string($1.rawValue) }
        }
        let grant = try await properties.remote.submit("POST", "/v1/grants", json: writer.bytes, GrantDocument.init)
        guard let token = grant.token else { throw .transport("the server's grant carries no token") }
        return IssuedGrant(id: grant.id, token: token, scopes: grant.scopes.map(\.rawValue), propertyIds: grant.propertyIds, expiresAt: grant.expiresAt)
    }
}
