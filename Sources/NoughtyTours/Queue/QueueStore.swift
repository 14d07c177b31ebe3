import Foundation
import NTSQLiteDB

/// One item of the durable upload queue, as the drain handles it.
struct QueueItem: Sendable, Equatable {
    let id: Int64
    let propertyId: String
    let kind: Queue.Kind
    let entityId: String
    let payload: String?
    /// Attempts already made and finished (an interrupted one is not counted).
    let attempts: Int
}

/// The durable upload queue in the local database: items are added in the same transaction
/// as the write they carry; the drain claims, finishes and forgives them. Pure SQL on a
/// connection, no I/O of its own.
enum Queue {
    enum Kind: String, Sendable {
        case property, floor, plan, worldmap, panorama, deleteProperty
    }

    /// Adds an item; returns its id, for items that depend on it.
    @discardableResult
    static func add(_ db: Database, property: String, kind: Kind, entity: String, dependsOn: Int64?, payload: String? = nil) throws -> Int64 {
        try db.run("INSERT INTO queue_items (property_id, kind, entity_id, payload, depends_on, created_at) VALUES (?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                   property, kind.rawValue, entity, payload, dependsOn)
        return try db.first("SELECT last_insert_rowid()")?.decode(0, as: Int64.self) ?? 0
    }

    /// The newest item of an entity among `kinds`: what a new item of it must come after.
    static func latest(_ db: Database, kinds: [Kind], entity: String) throws -> Int64? {
        try kinds.compactMap { kind in
            try db.first("SELECT max(id) FROM queue_items WHERE entity_id = ? AND kind = ?", entity, kind.rawValue)?.decodeIfPresent(0, as: Int64.self)
        }.max()
    }

    /// Items in flight when the process died go back to pending, their interrupted attempt
    /// not counted; the ones of a property deleted meanwhile are dropped.
    static func resumeInterrupted(_ db: Database) throws {
        try db.run("""
            DELETE FROM queue_items WHERE state = 'inflight' AND kind != 'deleteProperty'
                AND property_id NOT IN (SELECT id FROM properties)
            """)
        try db.run("UPDATE queue_items SET state = 'pending' WHERE state = 'inflight'")
    }

    /// Claims up to `limit` items that may go now: pending, due, every item they depend on
    /// done, and (for a property's deletion) nothing of that property still in flight. They
    /// become in flight, so that no item is ever sent twice at once.
    static func claim(_ db: Database, limit: Int, now: Double) throws -> [QueueItem] {
        let rows = try db.query("""
            SELECT id, property_id, kind, entity_id, payload, attempts FROM queue_items AS q
            WHERE state = 'pending' AND not_before <= ?
              AND NOT EXISTS (SELECT 1 FROM queue_items AS d WHERE d.id = q.depends_on AND d.state != 'done')
              AND (kind != 'deleteProperty' OR NOT EXISTS (
                    SELECT 1 FROM queue_items AS i WHERE i.property_id = q.property_id AND i.state = 'inflight'))
            ORDER BY id LIMIT ?
            """, now, limit)
        let items = try rows.compactMap { row -> QueueItem? in
            let id = try row.decode(0, as: Int64.self)
            guard let kind = Kind(rawValue: try row.decode(2, as: String.self)) else { return nil }
            return QueueItem(id: id, propertyId: try row.decode(1, as: String.self), kind: kind, entityId: try row.decode(3, as: String.self),
                             payload: try row.decodeIfPresent(4, as: String.self), attempts: try row.decode(5, as: Int.self))
        }
        for item in items { try db.run("UPDATE queue_items SET state = 'inflight' WHERE id = ?", item.id) }
        return items
    }

    /// When the next pending item waiting out its backoff is due (unix seconds), if any.
    static func nextDue(_ db: Database, after now: Double) throws -> Double? {
        try db.first("SELECT min(not_before) FROM queue_items WHERE state = 'pending' AND not_before > ?", now)?.decodeIfPresent(0, as: Double.self)
    }

    /// The item reached the server (or no longer needs to).
    static func succeeded(_ db: Database, _ item: QueueItem, now: Double) throws {
        try db.run("""
            UPDATE queue_items SET state = 'done', attempts = attempts + 1, last_error = NULL, failed_at = NULL, done_at = ?
            WHERE id = ? AND state = 'inflight'
            """, now, item.id)
    }

    /// The attempt failed: tried again at `retryAt` (unix seconds), or failed for good (nil).
    static func attemptFailed(_ db: Database, _ item: QueueItem, error: NoughtyToursError, retryAt: Double?, now: Double) throws {
        try db.run("""
            UPDATE queue_items SET state = ?, attempts = attempts + 1, not_before = ?, last_error = ?, failed_at = ?
            WHERE id = ? AND state = 'inflight'
            """, retryAt == nil ? "failed" : "pending", retryAt ?? 0, StoredError.encode(error), now, item.id)
    }

    /// A property's items that failed at least once and are not done, oldest first.
    static func failures(_ db: Database, propertyId: String) throws -> [UploadFailure] {
        try db.query("""
            SELECT kind, entity_id, attempts, last_error, failed_at, state FROM queue_items
            WHERE property_id = ? AND state != 'done' AND last_error IS NOT NULL ORDER BY id
            """, propertyId).compactMap { row in
            guard let kind = Kind(rawValue: try row.decode(0, as: String.self)) else { return nil }
            return UploadFailure(item: UploadItem(propertyId: propertyId, kind: kind.uploadKind, entityId: try row.decode(1, as: String.self)),
                                 attempts: try row.decode(2, as: Int.self), lastError: StoredError.decode(try row.decode(3, as: String.self)),
                                 willRetry: try row.decodeIfPresent(5, as: String.self) != "failed", failedAt: Date(timeIntervalSince1970: try row.decode(4, as: Double.self)))
        }
    }

    /// The interrupted attempt (the library stopping) is not counted: the item goes back.
    static func interrupted(_ db: Database, _ item: QueueItem) throws {
        try db.run("UPDATE queue_items SET state = 'pending' WHERE id = ? AND state = 'inflight'", item.id)
    }

    /// "The user taps sync": every failed item's counter is forgiven, and items waiting out a
    /// backoff go now.
    static func forgive(_ db: Database) throws {
        try db.run("UPDATE queue_items SET state = 'pending', attempts = 0, not_before = 0, last_error = NULL, failed_at = NULL WHERE state = 'failed'")
        try db.run("UPDATE queue_items SET not_before = 0 WHERE state = 'pending' AND not_before > 0")
    }
}
