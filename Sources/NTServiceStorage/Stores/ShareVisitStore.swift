import NTAPIModel
import NTHashing
import NTLogging
import NTServiceModel
import NTSQLiteDB

/// What a link's opening records about the visitor: never stored, only hashed.
package struct VisitorClient {
    package var address: [UInt8]
    package var userAgent: String

    package init(address: [UInt8], userAgent: String) {
        self.address = address
        self.userAgent = userAgent
    }
}

/// The limits of a link's statistics (`shareVisitsPerDay`, `shareVisitMaxSeconds`,
/// `shareEventMinutes`).
package struct VisitLimits: Sendable {
    package var visitsPerDay: Int
    package var visitMaxSeconds: Int
    package var eventSeconds: Int

    package init(visitsPerDay: Int, visitMaxSeconds: Int, eventSeconds: Int) {
        self.visitsPerDay = visitsPerDay
        self.visitMaxSeconds = visitMaxSeconds
        self.eventSeconds = eventSeconds
    }
}

/// What a beacon may add to a visit.
package enum BeaconOutcome: Equatable {
    case recorded
    /// The visit is not one of the link's (its link revoked, or a made-up id).
    case noVisit
    /// The panorama is not one of the link's tour.
    case noPanorama
}

/// The SQL of share links' statistics (docs/security.md "Share statistics"; migration 0020 /
/// PostgreSQL 0017). A visit is one opening of a link; its visitor a keyed hash of the client's
/// address and user agent under the day's salt, so that one person is one visitor a day and
/// cannot be followed from one day to the next once the salt is gone.
package enum ShareVisitStore {

    /// Records an opening of the link: its visit's id, for the viewer's beacons; nil when the
    /// link had `visitsPerDay` visits today already (the page is shown, the view not counted).
    /// The link's `share.viewed` is written when none was in the last `eventSeconds`.
    package static func recordView(_ db: any SQLConnection, _ share: OpenedShare, _ client: VisitorClient, limits: VisitLimits,
                           at now: WallClockTime) async throws -> String? {
        let day = Self.day(now)
        // On PostgreSQL the link's row is locked first: openings of one link at once count one
        // after another (the day's cap, a visitor seen before, the totals).
        if db.dialect == .postgresql {
            _ = try await db.first("SELECT 1 FROM shares WHERE tenant_id = ? AND id = ? FOR UPDATE", share.tenant, share.id)
        }
        let counted = try await db.first("SELECT count(*) FROM share_visits WHERE tenant_id = ? AND share_id = ? AND day = ?",
                                         share.tenant, share.id, day)?.decode(0, as: Int.self) ?? 0
        guard counted < limits.visitsPerDay else { return nil }
        let visitor = hmacSHA256(key: try await salt(db, day: day), client.address + [0] + Array(client.userAgent.utf8))
        // The visitor hash is the day's: one not seen before is a new visitor (the index by day).
        let returning = try await db.first("SELECT 1 FROM share_visits WHERE tenant_id = ? AND share_id = ? AND day = ? AND visitor = ? LIMIT 1",
                                           share.tenant, share.id, day, Blob(visitor)) != nil
        let visit = Identifier.make()
        try await db.run("INSERT INTO share_visits (tenant_id, share_id, id, day, visitor, started_at) VALUES (?, ?, ?, ?, ?, ?)",
                         share.tenant, share.id, visit, day, Blob(visitor), now.seconds)
        try await db.run("UPDATE shares SET views = views + 1, visitors = visitors + ? WHERE tenant_id = ? AND id = ?",
                         Int64(returning ? 0 : 1), share.tenant, share.id)
        // At most one event per link per window: the first opening after a quiet window writes it.
        guard try await db.first("""
            UPDATE shares SET viewed_event_at = ? WHERE tenant_id = ? AND id = ? AND (viewed_event_at IS NULL OR viewed_event_at <= ?) RETURNING id
            """, now.seconds, share.tenant, share.id, now.seconds - Int64(limits.eventSeconds)) != nil else { return visit }
        let totals = try await db.first("SELECT views, visitors FROM shares WHERE tenant_id = ? AND id = ?", share.tenant, share.id)
        let (views, visitors) = (try totals?.decode("views", as: Int.self) ?? 1, try totals?.decode("visitors", as: Int.self) ?? 1)
        try await EventStore.append(db, share.tenant, .shareViewed, property: share.propertyId, at: now, changesTour: false) { writer in
            writer.key("shareId"); writer.string(share.id)
            writer.key("label"); writer.string(share.label)
            writer.key("views"); writer.int(views)
            writer.key("visitors"); writer.int(visitors)
        }
        return visit
    }

    /// Records the time a panorama has been shown in a visit: the most reported, within what
    /// the visit can have spent (since it began, at most `visitMaxSeconds`, the visit's other
    /// panoramas' time included).
    package static func recordBeacon(_ db: any SQLConnection, _ share: OpenedShare, visit: String, _ beacon: VisitBeacon,
                             visitMaxSeconds: Int, at now: WallClockTime) async throws -> BeaconOutcome {
        // On PostgreSQL the visit's row is locked: two beacons of one visit add up within its bound.
        guard let started = try await db.first(db.dialect.pick(
            sqlite: "SELECT started_at FROM share_visits WHERE tenant_id = ? AND share_id = ? AND id = ?",
            postgresql: "SELECT started_at FROM share_visits WHERE tenant_id = ? AND share_id = ? AND id = ? FOR UPDATE"),
            share.tenant, share.id, visit)?.decode(0, as: Int64.self) else { return .noVisit }
        guard try await db.first("SELECT 1 FROM panoramas WHERE tenant_id = ? AND id = ? AND property_id = ?",
                                 share.tenant, beacon.panoramaId, share.propertyId) != nil else { return .noPanorama }
        // Started in whole seconds: the second it began counts whole.
        let elapsed = (max(0, now.seconds - started) + 1) * 1000
        let bound = min(elapsed, Int64(visitMaxSeconds) * 1000)
        let shown = try await db.query("SELECT panorama_id, milliseconds FROM share_visit_panoramas WHERE tenant_id = ? AND share_id = ? AND visit_id = ?",
                                       share.tenant, share.id, visit)
        var others: Int64 = 0
        var before: Int64 = 0
        for row in shown {
            let milliseconds = try row.decode("milliseconds", as: Int64.self)
            if try row.decode("panorama_id", as: String.self) == beacon.panoramaId { before = milliseconds } else { others += milliseconds }
        }
        let milliseconds = max(before, min(beacon.milliseconds, max(0, bound - others)))
        try await db.run("""
            INSERT INTO share_visit_panoramas (tenant_id, share_id, visit_id, panorama_id, milliseconds) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (tenant_id, share_id, visit_id, panorama_id) DO UPDATE SET milliseconds = excluded.milliseconds
            """, share.tenant, share.id, visit, beacon.panoramaId, milliseconds)
        try await db.run("UPDATE shares SET milliseconds = milliseconds + ? WHERE tenant_id = ? AND id = ?", milliseconds - before, share.tenant, share.id)
        return .recorded
    }

    /// A link's statistics; nil when the tenant has no such link.
    package static func stats(_ db: any SQLConnection, _ tenant: Int64, shareId: String) async throws -> ShareStatsDocument? {
        guard try await db.first("SELECT 1 FROM shares WHERE tenant_id = ? AND id = ?", tenant, shareId) != nil else { return nil }
        let spent = try await db.query("""
            SELECT share_visits.day, sum(share_visit_panoramas.milliseconds) AS milliseconds FROM share_visit_panoramas
            JOIN share_visits ON share_visits.tenant_id = share_visit_panoramas.tenant_id AND share_visits.share_id = share_visit_panoramas.share_id
                AND share_visits.id = share_visit_panoramas.visit_id
            WHERE share_visit_panoramas.tenant_id = ? AND share_visit_panoramas.share_id = ? GROUP BY share_visits.day
            """, tenant, shareId)
        var byDay: [String: Int64] = [:]
        for row in spent { byDay[try row.decode("day", as: String.self)] = try row.decode("milliseconds", as: Int64.self) }
        let days = try await db.query("""
            SELECT day, count(*) AS views, count(DISTINCT visitor) AS visitors FROM share_visits WHERE tenant_id = ? AND share_id = ?
            GROUP BY day ORDER BY day DESC
            """, tenant, shareId).map { row in
            let day = try row.decode("day", as: String.self)
            return ShareStatsDocument.Day(day: day, views: try row.decode("views", as: Int.self), visitors: try row.decode("visitors", as: Int.self),
                                          milliseconds: byDay[day] ?? 0)
        }
        let panoramas = try await db.query("""
            SELECT panorama_id, count(*) AS visits, sum(milliseconds) AS milliseconds FROM share_visit_panoramas WHERE tenant_id = ? AND share_id = ?
            GROUP BY panorama_id ORDER BY milliseconds DESC, panorama_id
            """, tenant, shareId).map { row in
            ShareStatsDocument.Panorama(panoramaId: try row.decode("panorama_id", as: String.self), visits: try row.decode("visits", as: Int.self),
                                        milliseconds: try row.decode("milliseconds", as: Int64.self))
        }
        return ShareStatsDocument(shareId: shareId, days: days, panoramas: panoramas)
    }

    /// The day's salt, made by the first opening of the day; every earlier day's goes then, so
    /// that no visitor hash of another day can be made again.
    private static func salt(_ db: any SQLConnection, day: String) async throws -> [UInt8] {
        if let salt = try await db.first("SELECT salt FROM visitor_salts WHERE day = ?", day) {
            return try salt.decode(0, as: [UInt8].self)
        }
        try await db.run("DELETE FROM visitor_salts WHERE day < ?", day)
        var random = SystemRandomNumberGenerator()
        let fresh = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        // Several daemons may make one at once: the first stays, every one reads it.
        try await db.run("INSERT INTO visitor_salts (day, salt) VALUES (?, ?) ON CONFLICT (day) DO NOTHING", day, Blob(fresh))
        guard let salt = try await db.first("SELECT salt FROM visitor_salts WHERE day = ?", day) else {
            throw StorageError(.failed, "the day's visitor salt was not stored")
        }
        return try salt.decode(0, as: [UInt8].self)
    }

    /// The sweep: expired links go with their visits, and every salt of an earlier day (a day
    /// without an opening would keep its salt until the next). Returns the links removed.
    package static func sweep(_ db: any SQLConnection, at now: WallClockTime) async throws -> Int {
        try await db.run("DELETE FROM visitor_salts WHERE day < ?", day(now))
        return try await db.run("DELETE FROM shares WHERE expires_at <= ?", Timestamp.text(now))
    }

    /// The UTC day of a time, `YYYY-MM-DD`.
    static func day(_ time: WallClockTime) -> String {
        String(Timestamp.text(time).prefix(10))
    }
}
