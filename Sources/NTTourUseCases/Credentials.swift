import NTAPIModel
import NTServiceModel
import NTServiceStorage

/// A tenant's grants and tokens, made, listed and revoked by the tenant (docs/security.md).
/// Knows no HTTP.
package struct Credentials: Sendable {
    package let records: Records
    package let clock: any ServiceClock
    package let grantsPerTenant: Int
    package let tokensPerTenant: Int

    package init(records: Records, clock: any ServiceClock, grantsPerTenant: Int, tokensPerTenant: Int) {
        self.records = records
        self.clock = clock
        self.grantsPerTenant = grantsPerTenant
        self.tokensPerTenant = tokensPerTenant
    }

    /// A grant, its token shown this once; nil when the tenant holds `grantsPerTenant` live grants.
    package func createGrant(_ tenant: Int64, _ input: GrantInput) async throws -> GrantDocument? {
        let (cap, now) = (grantsPerTenant, clock.now())
        return try await records.write { try await GrantStore.create($0, tenant, input, cap: cap, at: now) }
    }

    package func grants(_ tenant: Int64, limit: Int, after: String?) async throws -> (items: [GrantDocument], more: Bool) {
        let now = clock.now()
        return try await records.read { try await GrantStore.grants($0, tenant, limit: limit, after: after, at: now) }
    }

    /// Whether an unrevoked grant of the tenant's was revoked.
    package func revokeGrant(_ tenant: Int64, _ id: String) async throws -> Bool {
        let now = clock.now()
        return try await records.write { try await GrantStore.revoke($0, tenant, id: id, at: now) }
    }

    /// A token, shown this once; nil when the tenant holds `tokensPerTenant` unrevoked tokens.
    package func createToken(_ tenant: Int64) async throws -> TokenDocument? {
        let (cap, now) = (tokensPerTenant, clock.now())
        return try await records.write { try await TenantStore.createToken($0, tenant: tenant, cap: cap, at: now) }
    }

    package func tokens(_ tenant: Int64, limit: Int, after: Int64) async throws -> (items: [TokenDocument], more: Bool) {
        try await records.readOne { try await TenantStore.tokens($0, tenant: tenant, limit: limit, after: after) }
    }

    package func revokeToken(_ tenant: Int64, _ id: Int64) async throws -> TokenRevocation {
        let now = clock.now()
        return try await records.write { try await TenantStore.revoke($0, tenant: tenant, id: id, at: now) }
    }
}
