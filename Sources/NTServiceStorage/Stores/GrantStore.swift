import NTAPIModel
import NTHashing
import NTLogging
import NTServiceModel
import NTSQLiteDB

/// A grant as authentication finds it: whose it is, what it may do and on which properties.
package struct GrantAccess: Sendable, Equatable {
    package let id: String
    package let tenant: Int64
    package let scopes: [GrantScope]
    package let propertyIds: Set<String>

    /// Whether the grant may do what `scope` names: capture reads too.
    package func has(_ scope: GrantScope) -> Bool { scopes.contains(.capture) || scopes.contains(scope) }
}

/// Grants (docs/security.md "Grants"): tokens for one job on named properties, made by the
/// tenant over HTTP. A token is shown once; only its SHA-256 is stored and compared.
package enum GrantStore {
    package static let tokenPrefix = "ntg_"

    /// How a grant token's lookup came out.
    package enum Lookup: Equatable {
        case valid(GrantAccess)
        case expired
        case revoked
    }

    /// Makes a grant; nil when the tenant holds `cap` live grants already.
    package static func create(_ db: any SQLConnection, _ tenant: Int64, _ input: GrantInput, cap: Int, at now: WallClockTime) async throws -> GrantDocument? {
        let live = try await db.first("SELECT COUNT(*) FROM grants WHERE tenant_id = ? AND expires_at > ? AND revoked_at IS NULL",
                                      tenant, now.seconds)?.decode(0, as: Int64.self) ?? 0
        guard live < cap else { return nil }
        let (id, token) = (Identifier.make(), Secrets.make(prefix: tokenPrefix))
        let expiresAt = now.seconds + Int64(input.expiresInSeconds)
        let scopes = input.scopes.map(\.rawValue).joined(separator: " ")
        try await db.run("INSERT INTO grants (tenant_id, id, token_hash, scopes, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                         tenant, id, Blob(Secrets.hash(token)), scopes, Timestamp.text(now), expiresAt)
        for property in input.propertyIds { try await join(db, tenant, grant: id, property: property) }
        let grant = GrantDocument(id: id, token: token, scopes: input.scopes, propertyIds: input.propertyIds, createdAt: Timestamp.text(now),
                                  expiresAt: Timestamp.at(unixSeconds: expiresAt), revokedAt: nil)
        try await EventStore.appendTenantEvent(db, tenant, .grantCreated, at: now) { writer in
            writer.key("expiresAt"); writer.string(grant.expiresAt)
            writer.key("grantId"); writer.string(id)
            writer.key("propertyIds"); writer.array(grant.propertyIds) { $0.string($1) }
            writer.key("scopes"); writer.array(grant.scopes) { $0.string($1.rawValue) }
        }
        return grant
    }

    /// A property joins a grant (one it names, or one its capture created).
    package static func join(_ db: any SQLConnection, _ tenant: Int64, grant: String, property: String) async throws {
        try await db.run("INSERT INTO grant_properties (tenant_id, grant_id, property_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", tenant, grant, property)
    }

    /// The tenant's grants that have not expired (revoked ones too, with `revokedAt`), by id:
    /// the page and its grants' properties in one statement (one row per property).
    package static func grants(_ db: any SQLConnection, _ tenant: Int64, limit: Int, after: String?, at now: WallClockTime) async throws -> (items: [GrantDocument], more: Bool) {
        let rows = try await db.query("""
            SELECT page.id, page.scopes, page.created_at, page.expires_at, page.revoked_at, grant_properties.property_id
            FROM (SELECT id, scopes, created_at, expires_at, revoked_at FROM grants
                  WHERE tenant_id = ? AND expires_at > ? AND id > ? ORDER BY id LIMIT ?) AS page
            LEFT JOIN grant_properties ON grant_properties.tenant_id = ? AND grant_properties.grant_id = page.id
            ORDER BY page.id, grant_properties.property_id
            """, tenant, now.seconds, after ?? "", limit + 1, tenant)
        var items: [GrantDocument] = []
        for row in rows {
            let id = try row.decode("id", as: String.self)
            if items.last?.id != id {
                items.append(GrantDocument(id: id, token: nil, scopes: scopes(try row.decode("scopes", as: String.self)), propertyIds: [],
                                           createdAt: try row.decode("created_at", as: String.self),
                                           expiresAt: Timestamp.at(unixSeconds: try row.decode("expires_at", as: Int64.self)),
                                           revokedAt: try row.decodeIfPresent("revoked_at", as: String.self)))
            }
            if let property = try row.decodeIfPresent("property_id", as: String.self) { items[items.count - 1].propertyIds.append(property) }
        }
        return (Array(items.prefix(limit)), items.count > limit)
    }

    /// Revokes a grant, at once for every daemon (each request asks the database); false when
    /// the tenant has no such unrevoked grant.
    package static func revoke(_ db: any SQLConnection, _ tenant: Int64, id: String, at now: WallClockTime) async throws -> Bool {
        guard try await db.run("UPDATE grants SET revoked_at = ? WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL", Timestamp.text(now), tenant, id) == 1 else {
            return false
        }
        try await EventStore.appendTenantEvent(db, tenant, .grantRevoked, at: now) { writer in
            writer.key("grantId"); writer.string(id)
        }
        return true
    }

    /// The grant whose token's SHA-256 is `digest`, one row per property it holds (one
    /// statement: on PostgreSQL, one round trip).
    package static func lookupQuery(_ digest: [UInt8]) -> SQLStatement {
        SQLStatement("""
            SELECT grants.id, grants.tenant_id, grants.token_hash, grants.scopes, grants.expires_at, grants.revoked_at, grant_properties.property_id
            FROM grants LEFT JOIN grant_properties ON grant_properties.tenant_id = grants.tenant_id AND grant_properties.grant_id = grants.id
            WHERE grants.token_hash = ?
            """, Blob(digest))
    }

    /// The grant `lookupQuery(digest)` found, as of `now`; nil when there is none.
    package static func lookup(in rows: [Row], digest: [UInt8], at now: WallClockTime) throws(StorageError) -> Lookup? {
        guard let row = rows.first, constantTimeEquals(try row.decode("token_hash", as: [UInt8].self), digest) else { return nil }
        if try row.decodeIfPresent("revoked_at", as: String.self) != nil { return .revoked }
        guard try row.decode("expires_at", as: Int64.self) > now.seconds else { return .expired }
        var properties = Set<String>()
        for row in rows { if let id = try row.decodeIfPresent("property_id", as: String.self) { properties.insert(id) } }
        return .valid(GrantAccess(id: try row.decode("id", as: String.self), tenant: try row.decode("tenant_id", as: Int64.self),
                                  scopes: scopes(try row.decode("scopes", as: String.self)), propertyIds: properties))
    }

    /// Whether the upload's grant (if a grant began it) is revoked: its capability then ends.
    /// nil when the tenant has no such upload.
    package static func uploadRevoked(_ db: any SQLConnection, _ tenant: Int64, upload: String) async throws -> Bool? {
        guard let row = try await db.first("""
            SELECT uploads.grant_id, grants.revoked_at, grants.id AS found FROM uploads
            LEFT JOIN grants ON grants.tenant_id = uploads.tenant_id AND grants.id = uploads.grant_id
            WHERE uploads.tenant_id = ? AND uploads.id = ?
            """, tenant, upload) else { return nil }
        guard try row.decodeIfPresent("grant_id", as: String.self) != nil else { return false }
        // A grant that is gone counts as revoked: nothing vouches for the upload any more.
        return try row.decodeIfPresent("found", as: String.self) == nil || row.decodeIfPresent("revoked_at", as: String.self) != nil
    }

    private static func scopes(_ text: String) -> [GrantScope] {
        text.split(separator: " ").compactMap { GrantScope(rawValue: String($0)) }.sorted()
    }
}

extension GrantStore {
    /// A thing of a tenant whose property a grant must hold.
    package enum Thing: Sendable {
        case property, floor, panorama, tour, upload
    }

    /// The property the thing `id` of kind `thing` belongs to; nil when the tenant has no such thing.
    package static func propertyId(_ db: any SQLConnection, _ tenant: Int64, of thing: Thing, _ id: String) async throws -> String? {
        let sql: String
        switch thing {
        case .property: sql = "SELECT id FROM properties WHERE tenant_id = ? AND id = ?"
        case .floor: sql = "SELECT property_id FROM floors WHERE tenant_id = ? AND id = ?"
        case .panorama: sql = "SELECT property_id FROM panoramas WHERE tenant_id = ? AND id = ?"
        case .tour: sql = "SELECT id FROM properties WHERE tenant_id = ? AND tour_id = ?"
        case .upload:
            sql = """
                SELECT floors.property_id FROM uploads JOIN floors ON floors.tenant_id = uploads.tenant_id AND floors.id = uploads.floor_id
                WHERE uploads.tenant_id = ? AND uploads.id = ?
                """
        }
        return try await db.first(sql, tenant, id)?.decode(0, as: String.self)
    }
}

extension GrantStore {
    /// Removes grants expired before `cutoff` (Unix seconds) that no upload names (an
    /// upload's grant row says whether its URL still works); returns how many went.
    package static func deleteExpired(_ db: any SQLConnection, before cutoff: Int64) async throws -> Int {
        try await db.run("""
            DELETE FROM grants WHERE expires_at <= ?
            AND NOT EXISTS (SELECT 1 FROM uploads WHERE uploads.tenant_id = grants.tenant_id AND uploads.grant_id = grants.id)
            """, cutoff)
    }
}
