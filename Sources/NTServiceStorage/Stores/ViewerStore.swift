import NTAPIModel
import NTHashing
import NTLogging
import NTServiceModel
import NTSQLiteDB

/// What an unexpired share secret opens.
package struct OpenedShare: Sendable {
    package let tenant: Int64
    package let id: String
    package let label: String?
    package let propertyId: String
    /// The origins that may frame its embed form.
    package let frameAncestors: [String]
    package let offersOriginals: Bool
    package let offersFloorPlans: Bool
    package let branded: Bool
}

/// A signed-in browser as a request finds it.
package struct ViewerSession: Sendable {
    package var tenant: Int64
    package var tenantName: String
    package var csrf: String
}

/// Which property a floor, room or panorama of the tenant belongs to.
package enum TourPart {
    case floor(String), room(String), panorama(String)
}

/// The SQL of the tour viewer: browser sessions, share links, and the property list with its
/// counts. Secrets are made here and stored only hashed; every value is a bound parameter.
package enum ViewerStore {
    // MARK: Sessions

    /// Starts a session for a token's tenant; returns the cookie's value (shown only in the
    /// answer's Set-Cookie). Expired sessions go at the same time.
    package static func startSession(_ db: any SQLConnection, tenant: Int64, tokenId: Int64, lifetime: Int, at now: WallClockTime) async throws -> String {
        let cookie = Secrets.make(prefix: "")
        let stamp = Timestamp.text(now)
        try await db.run("DELETE FROM web_sessions WHERE expires_at <= ?", stamp)
        try await db.run("INSERT INTO web_sessions (cookie_hash, tenant_id, token_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                   Blob(Secrets.hash(cookie)), tenant, tokenId, Secrets.make(prefix: ""), stamp, Timestamp.text(now, plus: lifetime))
        return cookie
    }

    /// The unexpired session of a cookie whose token is still valid.
    package static func session(_ db: any SQLConnection, cookie: String, at now: WallClockTime) async throws -> ViewerSession? {
        let digest = Secrets.hash(cookie)
        guard let row = try await db.first("""
            SELECT web_sessions.cookie_hash, web_sessions.tenant_id, web_sessions.csrf, tenants.name FROM web_sessions
            JOIN tokens ON tokens.id = web_sessions.token_id AND tokens.revoked_at IS NULL
            JOIN tenants ON tenants.id = web_sessions.tenant_id
            WHERE web_sessions.cookie_hash = ? AND web_sessions.expires_at > ?
            """, Blob(digest), Timestamp.text(now)),
              constantTimeEquals(try row.decode("cookie_hash", as: [UInt8].self), digest) else { return nil }
        return ViewerSession(tenant: try row.decode("tenant_id", as: Int64.self), tenantName: try row.decode("name", as: String.self), csrf: try row.decode("csrf", as: String.self))
    }

    package static func endSession(_ db: any SQLConnection, cookie: String) async throws {
        try await db.run("DELETE FROM web_sessions WHERE cookie_hash = ?", Blob(Secrets.hash(cookie)))
    }

    // MARK: Shares

    /// Makes a share link of a tour, its secret `secretOf` its id (only the secret's hash is
    /// kept); nil when the tenant has no such tour. Expired links of the tenant go at the same
    /// time. A tour with `maxLive` live links already is a 409.
    package static func createShare(_ db: any SQLConnection, _ tenant: Int64, tourId: String, _ input: ShareInput, secretOf: (String) -> String,
                            maxLive: Int, at now: WallClockTime) async throws -> ShareDocument? {
        guard let property = try await db.first("SELECT id FROM properties WHERE tenant_id = ? AND tour_id = ?", tenant, tourId)?.decode("id", as: String.self) else {
            return nil
        }
        let stamp = Timestamp.text(now)
        try await db.run("DELETE FROM shares WHERE tenant_id = ? AND expires_at <= ?", tenant, stamp)
        let live = try await db.first("SELECT count(*) FROM shares WHERE tenant_id = ? AND property_id = ?", tenant, property)?.decode(0, as: Int64.self) ?? 0
        guard live < maxLive else {
            throw ServiceError(.conflict, "the tour has \(live) live share links, the most maxSharesPerTour allows: revoke one first")
        }
        let id = Identifier.make(), secret = secretOf(id)
        let share = ShareDocument(id: id, tourId: tourId, url: "/t/" + secret, label: input.label, createdAt: stamp,
                                  expiresAt: Timestamp.text(now, plus: input.expiresInSeconds), frameAncestors: input.frameAncestors,
                                  offersOriginals: input.offersOriginals, offersFloorPlans: input.offersFloorPlans, branded: input.branded)
        try await db.run("""
            INSERT INTO shares (tenant_id, id, property_id, secret_hash, created_at, expires_at, frame_ancestors, label, offers_originals, offers_floor_plans,
                                branded)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, tenant, share.id, property, Blob(Secrets.hash(secret)), share.createdAt, share.expiresAt, FrameAncestors.text(share.frameAncestors),
            share.label, Int64(share.offersOriginals ? 1 : 0), Int64(share.offersFloorPlans ? 1 : 0), Int64(share.branded ? 1 : 0))
        return share
    }

    /// A page of a tour's unexpired share links, newest first, after the link `after` (nil:
    /// from the newest), and whether more follow; nil when the tenant has no such tour. Each
    /// link's URL where `secretOf` its id is its secret (not for a link made before secrets were
    /// made so, or under another key).
    package static func shares(_ db: any SQLConnection, _ tenant: Int64, tourId: String, limit: Int, after: String?, secretOf: (String) -> String,
                               at now: WallClockTime) async throws -> (page: [ShareDocument], more: Bool)? {
        guard let property = try await db.first("SELECT id FROM properties WHERE tenant_id = ? AND tour_id = ?", tenant, tourId)?.decode("id", as: String.self) else { return nil }
        let stamp = Timestamp.text(now)
        let rows: [Row]
        if let after {
            // Newest first, ties by id: the rows after the cursor's (created_at, id).
            guard let createdAt = try await db.first("SELECT created_at FROM shares WHERE tenant_id = ? AND property_id = ? AND id = ?", tenant, property, after)?
                .decode("created_at", as: String.self) else { throw ServiceError.badRequest("after names no share link of this tour") }
            rows = try await db.query("""
                SELECT id, secret_hash, label, created_at, expires_at, frame_ancestors, offers_originals, offers_floor_plans, branded, views, visitors, milliseconds FROM shares
                WHERE tenant_id = ? AND property_id = ? AND expires_at > ? AND (created_at < ? OR (created_at = ? AND id > ?))
                ORDER BY created_at DESC, id LIMIT ?
                """, tenant, property, stamp, createdAt, createdAt, after, limit + 1)
        } else {
            rows = try await db.query("""
                SELECT id, secret_hash, label, created_at, expires_at, frame_ancestors, offers_originals, offers_floor_plans, branded, views, visitors, milliseconds FROM shares
                WHERE tenant_id = ? AND property_id = ? AND expires_at > ?
                ORDER BY created_at DESC, id LIMIT ?
                """, tenant, property, stamp, limit + 1)
        }
        let page = try rows.prefix(limit).map { row in
            let id = try row.decode("id", as: String.self), secret = secretOf(id)
            let copyable = constantTimeEquals(Secrets.hash(secret), try row.decode("secret_hash", as: [UInt8].self))
            return ShareDocument(id: id, tourId: tourId, url: copyable ? "/t/" + secret : nil, label: try row.decodeIfPresent("label", as: String.self),
                          createdAt: try row.decode("created_at", as: String.self), expiresAt: try row.decode("expires_at", as: String.self),
                          frameAncestors: FrameAncestors.list(try row.decodeIfPresent("frame_ancestors", as: String.self)),
                          offersOriginals: try row.decode("offers_originals", as: Int64.self) != 0,
                          offersFloorPlans: try row.decode("offers_floor_plans", as: Int64.self) != 0, branded: try row.decode("branded", as: Int64.self) != 0,
                          views: try row.decode("views", as: Int.self), visitors: try row.decode("visitors", as: Int.self),
                          milliseconds: try row.decode("milliseconds", as: Int64.self))
        }
        return (page, rows.count > limit)
    }

    /// Revokes a share link; returns its property's id, nil when the tenant has no such link.
    package static func revokeShare(_ db: any SQLConnection, _ tenant: Int64, id: String) async throws -> String? {
        try await db.first("DELETE FROM shares WHERE tenant_id = ? AND id = ? RETURNING property_id", tenant, id)?.decode(0, as: String.self)
    }

    package static func share(_ db: any SQLConnection, secret: String, at now: WallClockTime) async throws -> OpenedShare? {
        let digest = Secrets.hash(secret)
        guard let row = try await db.first("""
            SELECT tenant_id, id, label, property_id, secret_hash, frame_ancestors, offers_originals, offers_floor_plans, branded FROM shares WHERE secret_hash = ? AND expires_at > ?
            """, Blob(digest), Timestamp.text(now)),
              constantTimeEquals(try row.decode("secret_hash", as: [UInt8].self), digest) else { return nil }
        return OpenedShare(tenant: try row.decode("tenant_id", as: Int64.self), id: try row.decode("id", as: String.self),
                           label: try row.decodeIfPresent("label", as: String.self), propertyId: try row.decode("property_id", as: String.self),
                           frameAncestors: FrameAncestors.list(try row.decodeIfPresent("frame_ancestors", as: String.self)),
                           offersOriginals: try row.decode("offers_originals", as: Int64.self) != 0,
                           offersFloorPlans: try row.decode("offers_floor_plans", as: Int64.self) != 0, branded: try row.decode("branded", as: Int64.self) != 0)
    }

    // MARK: The property list

    /// A page of the tenant's properties whose name contains `query` (case-insensitive for
    /// ASCII), by name, with their counts; whether a next page exists.
    package static func propertyList(_ db: any SQLConnection, _ tenant: Int64, query: String, page: Int, pageSize: Int) async throws -> ([PropertySummary], hasNext: Bool) {
        // LIKE's wildcards in the query are literal characters.
        let pattern = "%" + query.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        let rows = try await db.query(db.dialect.pick(sqlite: """
            SELECT properties.*,
                (SELECT count(*) FROM floors WHERE floors.tenant_id = properties.tenant_id AND floors.property_id = properties.id) AS floor_total,
                (SELECT count(*) FROM rooms WHERE rooms.tenant_id = properties.tenant_id AND rooms.floor_id IN
                    (SELECT floors.id FROM floors WHERE floors.tenant_id = properties.tenant_id AND floors.property_id = properties.id)) AS room_total,
                (SELECT count(*) FROM panoramas WHERE panoramas.tenant_id = properties.tenant_id AND panoramas.property_id = properties.id) AS panorama_total
            FROM properties WHERE tenant_id = ? AND name LIKE ? ESCAPE '\\'
            ORDER BY name COLLATE NOCASE, id LIMIT ? OFFSET ?
            """, postgresql: """
            SELECT properties.*,
                (SELECT count(*) FROM floors WHERE floors.tenant_id = properties.tenant_id AND floors.property_id = properties.id) AS floor_total,
                (SELECT count(*) FROM rooms WHERE rooms.tenant_id = properties.tenant_id AND rooms.floor_id IN
                    (SELECT floors.id FROM floors WHERE floors.tenant_id = properties.tenant_id AND floors.property_id = properties.id)) AS room_total,
                (SELECT count(*) FROM panoramas WHERE panoramas.tenant_id = properties.tenant_id AND panoramas.property_id = properties.id) AS panorama_total
            FROM properties WHERE tenant_id = ? AND name ILIKE ? ESCAPE '\\'
            ORDER BY lower(name), id LIMIT ? OFFSET ?
            """), tenant, pattern, pageSize + 1, (page - 1) * pageSize)
        let items = try rows.prefix(pageSize).map { row in
            PropertySummary(property: try PropertyRecord(row), floors: try row.decode("floor_total", as: Int.self), rooms: try row.decode("room_total", as: Int.self),
                            panoramas: try row.decode("panorama_total", as: Int.self))
        }
        return (Array(items), rows.count > pageSize)
    }

    package static func propertyId(_ db: any SQLConnection, _ tenant: Int64, of part: TourPart) async throws -> String? {
        switch part {
        case .floor(let id):
            return try await db.first("SELECT property_id FROM floors WHERE tenant_id = ? AND id = ?", tenant, id)?.decode(0, as: String.self)
        case .room(let id):
            return try await db.first("""
                SELECT floors.property_id FROM rooms JOIN floors ON floors.tenant_id = rooms.tenant_id AND floors.id = rooms.floor_id
                WHERE rooms.tenant_id = ? AND rooms.id = ?
                """, tenant, id)?.decode(0, as: String.self)
        case .panorama(let id):
            return try await db.first("SELECT property_id FROM panoramas WHERE tenant_id = ? AND id = ?", tenant, id)?.decode(0, as: String.self)
        }
    }
}

/// A share's frame ancestors as stored: a JSON array of origins (checked when the link was made).
enum FrameAncestors {
    static func text(_ origins: [String]) -> String {
        var writer = JSONWriter()
        writer.array(origins) { $0.string($1) }
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func list(_ text: String?) -> [String] {
        ((try? JSONReader.parse(text ?? "[]"))?.array ?? []).compactMap(\.string)
    }
}
