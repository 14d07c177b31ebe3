import NTAPIModel

/// A tenant's grants and tokens, made, listed and revoked by the tenant (docs/security.md).
/// Knows no HTTP.
struct Credentials: Sendable {
    let records: Records
    let clock: any ServiceClock
    let grantsPerTenant: Int
    let tokensPerTenant: Int

    /// A grant, its token shown this once; nil when the tenant holds `grantsPerTenant` live grants.
    func createGrant(_ tenant: Int64, _ input: GrantInput) async throws -> GrantDocument? {
        let (cap, now) = (grantsPerTenant, clock.now())
        return try await records.write { try await GrantStore.create($0, tenant, input, cap: cap, at: now) }
    }

    func grants(_ tenant: Int64, limit: Int, after: String?) async throws -> (items: [GrantDocument], more: Bool) {
        let now = clock.now()
        return try await records.read { try await GrantStore.grants($0, tenant, limit: limit, after: after, at: now) }
    }

    /// Whether an unrevoked grant of the tenant's was revoked.
    func revokeGrant(_ tenant: Int64, _ id: String) async throws -> Bool {
        let now = clock.now()
        return try await records.write { try await GrantStore.revoke($0, tenant, id: id, at: now) }
    }

    /// A token, shown this once; nil when the tenant holds `tokensPerTenant` unrevoked tokens.
    func createToken(_ tenant: Int64) async throws -> TokenDocument? {
        let (cap, now) = (tokensPerTenant, clock.now())
        return try await records.write { try await TenantStore.createToken($0, tenant: tenant, cap: cap, at: now) }
    }

    func tokens(_ tenant: Int64, limit: Int, after: Int64) async throws -> (items: [TokenDocument], more: Bool) {
        try await records.readOne { try await TenantStore.tokens($0, tenant: tenant, limit: limit, after: after) }
    }

    func revokeToken(_ tenant: Int64, _ id: Int64) async throws -> TokenRevocation {
        let now = clock.now()
        return try await records.write { try await TenantStore.revoke($0, tenant: tenant, id: id, at: now) }
    }
}
