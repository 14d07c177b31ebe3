import Foundation
import NTAPIModel
import NTHashing
import NTLogging
import NTServiceModel
import NTSQLiteDB

/// How revoking one of a tenant's tokens came out.
package enum TokenRevocation { case revoked, notFound, lastToken }

/// Tenants and their bearer tokens. A token is shown once, when made; only its SHA-256 is
/// stored, and a lookup compares digests, never the token itself.
package enum TenantStore {
    package struct TokenInfo: Equatable {
        package var id: Int64
        package var tenant: String
        package var createdAt: String
        package var revokedAt: String?
    }

    static func tenantID(_ db: any SQLConnection, named name: String) async throws -> Int64? {
        try await db.first("SELECT id FROM tenants WHERE name = ?", name)?.decode("id", as: Int64.self)
    }

    static func createTenantIfMissing(_ db: any SQLConnection, named name: String, at now: WallClockTime) async throws -> Int64 {
        if let id = try await tenantID(db, named: name) { return id }
        try await db.run("INSERT INTO tenants (name, created_at) VALUES (?, ?)", name, Timestamp.text(now))
        guard let id = try await tenantID(db, named: name) else { throw StorageError(.corrupt, "tenant vanished after insert") }
        return id
    }

    /// Makes a token for the tenant (created when missing); returns its id and the token.
    package static func createToken(_ db: any SQLConnection, tenant name: String, at now: WallClockTime) async throws -> (id: Int64, token: String) {
        let tenant = try await createTenantIfMissing(db, named: name, at: now)
        let token = Secrets.make(prefix: "nt_")
        try await db.run("INSERT INTO tokens (tenant_id, token_hash, created_at) VALUES (?, ?, ?)", tenant, Blob(hash(token)), Timestamp.text(now))
        guard let id = try await db.first("SELECT id FROM tokens WHERE token_hash = ?", Blob(hash(token)))?.decode("id", as: Int64.self) else {
            throw StorageError(.corrupt, "token vanished after insert")
        }
        return (id, token)
    }

    /// A valid, unrevoked token's id and tenant.
    package static func signIn(_ token: String, _ db: any SQLConnection) async throws -> (tokenId: Int64, tenant: Int64)? {
        try await self.token(digest: hash(token), db)
    }

    /// The valid, unrevoked token whose SHA-256 is `digest`: its id and tenant.
    static func token(digest: [UInt8], _ db: any SQLConnection) async throws -> (tokenId: Int64, tenant: Int64)? {
        let lookup = tokenQuery(digest)
        return try validToken(in: try await db.query(lookup.sql, arguments: lookup.arguments), digest: digest)
    }

    /// The query finding the unrevoked token whose SHA-256 is `digest`.
    package static func tokenQuery(_ digest: [UInt8]) -> SQLStatement {
        SQLStatement("SELECT id, tenant_id, token_hash FROM tokens WHERE token_hash = ? AND revoked_at IS NULL", Blob(digest))
    }

    /// The token's id and tenant, when the rows of `tokenQuery(digest)` hold it.
    package static func validToken(in rows: [Row], digest: [UInt8]) throws(StorageError) -> (tokenId: Int64, tenant: Int64)? {
        guard let row = rows.first, constantTimeEquals(try row.decode("token_hash", as: [UInt8].self), digest) else { return nil }
        return (try row.decode("id", as: Int64.self), try row.decode("tenant_id", as: Int64.self))
    }

    static func name(_ db: any SQLConnection, tenant: Int64) async throws -> String? {
        try await db.first("SELECT name FROM tenants WHERE id = ?", tenant)?.decode("name", as: String.self)
    }

    package static func tokens(_ db: any SQLConnection) async throws -> [TokenInfo] {
        try await db.query("SELECT tokens.id, tenants.name, tokens.created_at, tokens.revoked_at FROM tokens JOIN tenants ON tenants.id = tokens.tenant_id ORDER BY tokens.id")
            .map { TokenInfo(id: try $0.decode(0, as: Int64.self), tenant: try $0.decode(1, as: String.self), createdAt: try $0.decode(2, as: String.self), revokedAt: try $0.decodeIfPresent(3, as: String.self)) }
    }

    /// Revokes a token; false when there is no such unrevoked token.
    package static func revoke(_ db: any SQLConnection, id: Int64, at now: WallClockTime) async throws -> Bool {
        try await db.run("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", Timestamp.text(now), id) == 1
    }

    /// Makes a token for a tenant over HTTP; nil when it holds `cap` unrevoked tokens already.
    package static func createToken(_ db: any SQLConnection, tenant: Int64, cap: Int, at now: WallClockTime) async throws -> TokenDocument? {
        let live = try await db.first("SELECT COUNT(*) FROM tokens WHERE tenant_id = ? AND revoked_at IS NULL", tenant)?.decode(0, as: Int64.self) ?? 0
        guard live < cap else { return nil }
        let token = Secrets.make(prefix: "nt_")
        try await db.run("INSERT INTO tokens (tenant_id, token_hash, created_at) VALUES (?, ?, ?)", tenant, Blob(hash(token)), Timestamp.text(now))
        guard let id = try await db.first("SELECT id FROM tokens WHERE token_hash = ?", Blob(hash(token)))?.decode("id", as: Int64.self) else {
            throw StorageError(.corrupt, "token vanished after insert")
        }
        return TokenDocument(id: String(id), token: token, createdAt: Timestamp.text(now), revokedAt: nil)
    }

    /// A page of the tenant's tokens by id, revoked ones too.
    package static func tokens(_ db: any SQLConnection, tenant: Int64, limit: Int, after: Int64) async throws -> (items: [TokenDocument], more: Bool) {
        let rows = try await db.query("SELECT id, created_at, revoked_at FROM tokens WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?", tenant, after, limit + 1)
        let items = try rows.prefix(limit).map { row in
            TokenDocument(id: String(try row.decode(0, as: Int64.self)), token: nil, createdAt: try row.decode(1, as: String.self),
                          revokedAt: try row.decodeIfPresent(2, as: String.self))
        }
        return (items, rows.count > limit)
    }

    /// Revokes one of the tenant's tokens, unless it is the last unrevoked one (the tenant
    /// would then have no way in but an operator's shell).
    package static func revoke(_ db: any SQLConnection, tenant: Int64, id: Int64, at now: WallClockTime) async throws -> TokenRevocation {
        guard try await db.first("SELECT 1 FROM tokens WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL", tenant, id) != nil else { return .notFound }
        let live = try await db.first("SELECT COUNT(*) FROM tokens WHERE tenant_id = ? AND revoked_at IS NULL", tenant)?.decode(0, as: Int64.self) ?? 0
        guard live > 1 else { return .lastToken }
        _ = try await db.run("UPDATE tokens SET revoked_at = ? WHERE tenant_id = ? AND id = ?", Timestamp.text(now), tenant, id)
        return .revoked
    }

    package static func hasTokens(_ db: any SQLConnection) async throws -> Bool {
        try await db.first("SELECT 1 FROM tokens LIMIT 1") != nil
    }

    private static func hash(_ token: String) -> [UInt8] {
        Secrets.hash(token)
    }
}
