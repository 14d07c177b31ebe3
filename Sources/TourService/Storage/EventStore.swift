import APIModel
import SQLiteDB

/// The SQL of the events outbox (docs/storage.md; migration 0008 / PostgreSQL 0005).
enum EventStore {
    /// Appends an event of the change in progress, in its transaction. The id is the
    /// tenant's next: its row's update holds the tenant's other writes until this one commits,
    /// so ids become visible in order.
    static func append(_ db: any SQLConnection, _ tenant: Int64, _ type: EventType, property: String,
                       _ data: (inout JSONWriter) -> Void) async throws {
        var writer = JSONWriter()
        writer.object(data)
        let json = String(decoding: writer.bytes, as: UTF8.self)
        switch db.dialect {
        case .postgresql:
            // One statement, one round trip.
            try await db.run("""
                WITH next AS (UPDATE tenants SET last_event_id = last_event_id + 1 WHERE id = ? RETURNING last_event_id)
                INSERT INTO events (tenant_id, id, type, property_id, created_at, data)
                SELECT ?, last_event_id, ?, ?, ?, ? FROM next
                """, tenant, tenant, type.rawValue, property, Timestamp.now(), json)
        case .sqlite:
            try await db.run("UPDATE tenants SET last_event_id = last_event_id + 1 WHERE id = ?", tenant)
            try await db.run("""
                INSERT INTO events (tenant_id, id, type, property_id, created_at, data)
                SELECT ?, last_event_id, ?, ?, ?, ? FROM tenants WHERE id = ?
                """, tenant, type.rawValue, property, Timestamp.now(), json, tenant)
        }
    }

    /// The tenant's events after `cursor`, in order, at most `limit`.
    static func page(_ db: any SQLConnection, _ tenant: Int64, after cursor: Int64, limit: Int) async throws -> [EventRecord] {
        try await db.query("SELECT * FROM events WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?", tenant, cursor, limit).map { row in
            EventRecord(id: row["id"].int64 ?? 0, type: row["type"].string ?? "", propertyId: row["property_id"].string ?? "",
                        createdAt: row["created_at"].string ?? "", data: row["data"].string ?? "{}")
        }
    }

    /// Removes events created before `cutoff` (a timestamp); how many.
    static func deleteCreated(_ db: any SQLConnection, before cutoff: String) async throws -> Int {
        try await db.run("DELETE FROM events WHERE created_at < ?", cutoff)
    }
}
