import NTAPIModel
import NTLogging
import NTServiceModel
import NTSQLiteDB

/// The SQL of the events outbox (docs/storage.md; migration 0008 / PostgreSQL 0005).
package enum EventStore {
    /// Appends an event of the change in progress, in its transaction. The id is the
    /// tenant's next: its row's update holds the tenant's other writes until this one commits,
    /// so ids become visible in order. The property's `tour.changed` is put off until its
    /// changes settle (gone with the property). `changesTour` false: an event of the property
    /// that changes nothing of its tour (its panorama processed), with no `tour.changed` after.
    static func append(_ db: any SQLConnection, _ tenant: Int64, _ type: EventType, property: String, at now: WallClockTime,
                       changesTour: Bool = true, _ data: (inout JSONWriter) -> Void) async throws {
        let trace = EventNotingConnection.note(db, tenant)
        guard changesTour else { return try await write(db, tenant, type, property: property, at: now, data) }
        guard type != .propertyDeleted else {
            try await db.run("DELETE FROM tour_changes WHERE tenant_id = ? AND property_id = ?", tenant, property)
            return try await write(db, tenant, type, property: property, at: now, data)
        }
        switch db.dialect {
        case .postgresql:
            // One statement, one round trip: the change noted and the event written.
            try await db.run("""
                WITH pending AS (INSERT INTO tour_changes (tenant_id, property_id, changed_at) VALUES (?, ?, ?)
                                 ON CONFLICT (tenant_id, property_id) DO UPDATE SET changed_at = excluded.changed_at),
                     next AS (UPDATE tenants SET last_event_id = last_event_id + 1 WHERE id = ? RETURNING last_event_id)
                INSERT INTO events (tenant_id, id, type, property_id, created_at, data, traceparent)
                SELECT ?, last_event_id, ?, ?, ?, ?, ? FROM next
                """, tenant, property, now.seconds, tenant, tenant, type.rawValue, property, Timestamp.text(now), json(data), trace)
        case .sqlite:
            try await db.run("""
                INSERT INTO tour_changes (tenant_id, property_id, changed_at) VALUES (?, ?, ?)
                ON CONFLICT (tenant_id, property_id) DO UPDATE SET changed_at = excluded.changed_at
                """, tenant, property, now.seconds)
            try await write(db, tenant, type, property: property, at: now, data)
        }
    }

    /// Appends an event of the tenant's own (not of a property: `propertyId` empty), in the
    /// transaction in progress.
    package static func appendTenantEvent(_ db: any SQLConnection, _ tenant: Int64, _ type: EventType, at now: WallClockTime,
                                  _ data: (inout JSONWriter) -> Void) async throws {
        try await write(db, tenant, type, property: "", at: now, data)
    }

    private static func json(_ data: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        writer.object(data)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private static func write(_ db: any SQLConnection, _ tenant: Int64, _ type: EventType, property: String, at now: WallClockTime,
                              _ data: (inout JSONWriter) -> Void) async throws {
        let trace = EventNotingConnection.note(db, tenant)
        let json = json(data)
        switch db.dialect {
        case .postgresql:
            // One statement, one round trip.
            try await db.run("""
                WITH next AS (UPDATE tenants SET last_event_id = last_event_id + 1 WHERE id = ? RETURNING last_event_id)
                INSERT INTO events (tenant_id, id, type, property_id, created_at, data, traceparent)
                SELECT ?, last_event_id, ?, ?, ?, ?, ? FROM next
                """, tenant, tenant, type.rawValue, property, Timestamp.text(now), json, trace)
        case .sqlite:
            try await db.run("UPDATE tenants SET last_event_id = last_event_id + 1 WHERE id = ?", tenant)
            try await db.run("""
                INSERT INTO events (tenant_id, id, type, property_id, created_at, data, traceparent)
                SELECT ?, last_event_id, ?, ?, ?, ?, ? FROM tenants WHERE id = ?
                """, tenant, type.rawValue, property, Timestamp.text(now), json, trace, tenant)
        }
    }

    /// Tour changes with no change since `cutoff` (Unix seconds): (tenant, property), at most
    /// `limit`, the oldest first.
    package static func settledTourChanges(_ db: any SQLConnection, changedBy cutoff: Int64, limit: Int) async throws -> [(tenant: Int64, property: String)] {
        try await db.query("SELECT tenant_id, property_id FROM tour_changes WHERE changed_at <= ? ORDER BY changed_at LIMIT ?", cutoff, limit).map { row in
            (try row.decode("tenant_id", as: Int64.self), try row.decode("property_id", as: String.self))
        }
    }

    /// Writes a settled tour change's `tour.changed` with the tour's counts, once: the daemon
    /// whose transaction deletes the pending row writes it (another found it gone). False when
    /// there was nothing (left) to write.
    package static func writeTourChanged(_ db: any SQLConnection, _ tenant: Int64, property: String, changedBy cutoff: Int64,
                                 at now: WallClockTime) async throws -> Bool {
        guard try await db.run("DELETE FROM tour_changes WHERE tenant_id = ? AND property_id = ? AND changed_at <= ?", tenant, property, cutoff) == 1,
              let status = try await TourStore.status(db, tenant, property) else { return false }
        try await write(db, tenant, .tourChanged, property: property, at: now) { data in
            data.key("tourId"); data.string(status.tourId)
            data.key("floors"); data.int(status.floorCount)
            data.key("rooms"); data.int(status.roomCount)
            data.key("panoramas"); data.int(status.panoramaCount)
            data.key("panoramaBytes"); data.int(status.panoramaBytes)
        }
        return true
    }

    /// The tenant's events after `cursor`, in order, at most `limit`.
    package static func page(_ db: any SQLConnection, _ tenant: Int64, after cursor: Int64, limit: Int) async throws -> [EventRecord] {
        try await db.query("SELECT * FROM events WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?", tenant, cursor, limit).map { row in
            EventRecord(id: try row.decode("id", as: Int64.self), type: try row.decode("type", as: String.self), propertyId: try row.decode("property_id", as: String.self),
                        createdAt: try row.decode("created_at", as: String.self), data: try row.decode("data", as: String.self),
                        traceparent: try row.decodeIfPresent("traceparent", as: String.self))
        }
    }

    /// Removes events created before `cutoff` (a timestamp); how many.
    package static func deleteCreated(_ db: any SQLConnection, before cutoff: String) async throws -> Int {
        try await db.run("DELETE FROM events WHERE created_at < ?", cutoff)
    }
}
