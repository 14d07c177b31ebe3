import NTAPIModel
import NTLogging
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTSQLKit

/// What a rewind did: a cursor past the tenant's last event would skip the events still to
/// come, unseen, so it is refused.
enum WebhookRewind: Equatable, Sendable {
    case rewound
    case notFound
    case pastLastEvent(Int64)
}

/// The SQL of webhook endpoints and their delivery log (migration 0010 / PostgreSQL 0007).
enum WebhookStore {
    /// What delivering an endpoint needs.
    struct Endpoint: Sendable {
        var url: String
        var events: [String]
        var sealedSecret: [UInt8]
        var after: Int64
        var attempts: Int
        var failingSince: Int64?
    }

    /// Makes an endpoint that delivers the events from now on; nil when the tenant has
    /// `maxPerTenant` already.
    static func create(_ db: any SQLConnection, _ tenant: Int64, id: String, url: String, events: [String], sealedSecret: [UInt8],
                       maxPerTenant: Int, at now: WallClockTime) async throws -> WebhookDocument? {
        let count = try await db.first("SELECT count(*) AS n FROM webhooks WHERE tenant_id = ?", tenant)?.decode("n", as: Int.self) ?? 0
        guard count < maxPerTenant else { return nil }
        let createdAt = Timestamp.text(now)
        let after = try await db.first("SELECT last_event_id FROM tenants WHERE id = ?", tenant)?.decode("last_event_id", as: Int64.self) ?? 0
        try await db.run("""
            INSERT INTO webhooks (tenant_id, id, url, event_types, secret, created_at, after_event_id) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, tenant, id, url, typesJSON(events), Blob(sealedSecret), createdAt, after)
        return WebhookDocument(id: id, url: url, events: events, createdAt: createdAt, after: after, attempts: 0)
    }

    static func list(_ db: any SQLConnection, _ tenant: Int64) async throws -> [WebhookDocument] {
        try await db.query("SELECT * FROM webhooks WHERE tenant_id = ? ORDER BY created_at, id", tenant).map(document)
    }

    static func get(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> WebhookDocument? {
        try await db.first("SELECT * FROM webhooks WHERE tenant_id = ? AND id = ?", tenant, id).map(document)
    }

    static func delete(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> Bool {
        try await db.run("DELETE FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ?", tenant, id)
        return try await db.run("DELETE FROM webhooks WHERE tenant_id = ? AND id = ?", tenant, id) == 1
    }

    /// The delivery log, newest first.
    static func deliveries(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> [DeliveryRecord] {
        try await db.query("SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? ORDER BY seq DESC", tenant, id).map { row in
            DeliveryRecord(event: try row.decode("event_id", as: Int64.self), attempt: try row.decode("attempt", as: Int.self), status: try row.decodeIfPresent("status", as: Int.self),
                           error: try row.decodeIfPresent("error", as: String.self), latencyMs: try row.decode("latency_ms", as: Int.self), at: try row.decode("at", as: String.self))
        }
    }

    /// Delivers again from after `cursor`, enabled and with no failure counted.
    static func rewind(_ db: any SQLConnection, _ tenant: Int64, _ id: String, after cursor: Int64) async throws -> WebhookRewind {
        let last = try await db.first("SELECT last_event_id FROM tenants WHERE id = ?", tenant)?.decode("last_event_id", as: Int64.self) ?? 0
        guard cursor <= last else {
            return try await db.first("SELECT 1 FROM webhooks WHERE tenant_id = ? AND id = ?", tenant, id) == nil ? .notFound : .pastLastEvent(last)
        }
        let changed = try await db.run("""
            UPDATE webhooks SET after_event_id = ?, attempts = 0, failing_since = NULL, disabled_at = NULL, next_attempt_at = 0
            WHERE tenant_id = ? AND id = ?
            """, cursor, tenant, id)
        return changed == 1 ? .rewound : .notFound
    }

    /// Endpoints with an event after their cursor, due and not delivered by any daemon now
    /// (`nowMs`), in fair turns: the tenant served least recently first, then its endpoint
    /// served least recently. An endpoint that always has something due never keeps another
    /// tenant's, or a newer endpoint's, turn (its slots go round, not to the oldest rows).
    static func due(_ db: any SQLConnection, nowMs: Int64, limit: Int) async throws -> [(tenant: Int64, id: String)] {
        try await db.query("""
            SELECT w.tenant_id, w.id FROM webhooks w JOIN tenants t ON t.id = w.tenant_id
            WHERE w.disabled_at IS NULL AND w.next_attempt_at <= ? AND w.leased_until < ? AND t.last_event_id > w.after_event_id
            ORDER BY t.webhooks_served_at, w.served_at, w.id LIMIT ?
            """, nowMs, nowMs, limit).map { row in
            (try row.decode("tenant_id", as: Int64.self), try row.decode("id", as: String.self))
        }
    }

    /// The outbox's backlog (/metrics): enabled endpoints with events not delivered yet, and
    /// how many of those are failing (waiting to try again). A count over every endpoint, once
    /// each `metricsRefreshSeconds`, never a request's.
    static let backlogSQL = """
        SELECT count(*) AS behind, coalesce(sum(CASE WHEN w.attempts > 0 THEN 1 ELSE 0 END), 0) AS failing
        FROM webhooks w JOIN tenants t ON t.id = w.tenant_id
        WHERE w.disabled_at IS NULL AND t.last_event_id > w.after_event_id
        """

    static func backlog(_ db: any SQLConnection) async throws -> (behind: Int, failing: Int) {
        guard let row = try await db.first(backlogSQL) else { return (0, 0) }
        return (Int(try row.decode("behind", as: Int64.self)), Int(try row.decode("failing", as: Int64.self)))
    }

    /// Takes the endpoint for one daemon's delivery until `lease` (Unix ms, also the lease's
    /// token), and counts its turn as served now: false when another daemon holds it or it was
    /// disabled or removed.
    static func claim(_ db: any SQLConnection, _ tenant: Int64, _ id: String, nowMs: Int64, lease: Int64) async throws -> Endpoint? {
        guard try await db.run("""
            UPDATE webhooks SET leased_until = ?, served_at = ? WHERE tenant_id = ? AND id = ? AND leased_until < ? AND disabled_at IS NULL
            """, lease, nowMs, tenant, id, nowMs) == 1,
              try await db.run("UPDATE tenants SET webhooks_served_at = ? WHERE id = ?", nowMs, tenant) == 1,
              let row = try await db.first("SELECT * FROM webhooks WHERE tenant_id = ? AND id = ?", tenant, id) else { return nil }
        return Endpoint(url: try row.decode("url", as: String.self), events: types(try row.decodeIfPresent("event_types", as: String.self)), sealedSecret: try row.decode("secret", as: [UInt8].self),
                        after: try row.decode("after_event_id", as: Int64.self), attempts: try row.decode("attempts", as: Int.self), failingSince: try row.decodeIfPresent("failing_since", as: Int64.self))
    }

    /// Moves the cursor from `cursor` past events the endpoint does not want (while it holds
    /// `lease`). False when the cursor is no longer where the delivery had it: a redelivery
    /// moved it, and the delivery must stop and leave it there.
    static func pass(_ db: any SQLConnection, _ tenant: Int64, _ id: String, lease: Int64, from cursor: Int64, to event: Int64) async throws -> Bool {
        try await db.run("UPDATE webhooks SET after_event_id = ? WHERE tenant_id = ? AND id = ? AND leased_until = ? AND after_event_id = ?",
                         event, tenant, id, lease, cursor) == 1
    }

    /// One attempt's outcome, logged, and the endpoint's state after it, in one transaction,
    /// compare-and-set: only while it holds `lease` and the cursor is still `cursor`, where the
    /// attempt began (a delivery whose lease ran out and was taken, or whose cursor a
    /// redelivery moved, records nothing and returns false: it must stop). Disabling writes
    /// `webhook.disabled`.
    @discardableResult
    static func record(_ db: any SQLConnection, _ tenant: Int64, _ id: String, lease: Int64, from cursor: Int64, attempt: Attempt,
                       next: WebhookRetry.State, keep: Int, at now: WallClockTime) async throws -> Bool {
        let (after, attempts, failingSince, nextAttemptAt, disabled): (Int64?, Int, Int64?, Int64, Bool) = switch next {
        case .delivered: (attempt.event, 0, nil, 0, false)
        case .retry(let count, let since, let at): (nil, count, since, at, false)
        case .disabled(let count, let since): (nil, count, since, 0, true)
        }
        guard try await db.run("""
            UPDATE webhooks SET after_event_id = coalesce(?, after_event_id), attempts = ?, failing_since = ?, next_attempt_at = ?,
                disabled_at = ?, deliveries_logged = deliveries_logged + 1
            WHERE tenant_id = ? AND id = ? AND leased_until = ? AND after_event_id = ?
            """, after, attempts, failingSince, nextAttemptAt, disabled ? Timestamp.text(now) : nil, tenant, id, lease, cursor) == 1,
              let seq = try await db.first("SELECT deliveries_logged FROM webhooks WHERE tenant_id = ? AND id = ?", tenant, id)?.decode("deliveries_logged", as: Int64.self)
        else { return false }
        try await db.run("""
            INSERT INTO webhook_deliveries (tenant_id, webhook_id, seq, event_id, attempt, status, error, latency_ms, at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, tenant, id, seq, attempt.event, attempt.number, attempt.status, attempt.error, attempt.latencyMs, Timestamp.text(now))
        try await db.run("DELETE FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? AND seq <= ?", tenant, id, seq - Int64(keep))
        if disabled {
            try await EventStore.appendTenantEvent(db, tenant, .webhookDisabled, at: now) { data in
                data.key("webhookId"); data.string(id)
                data.key("failingSince"); data.string(Timestamp.at(unixSeconds: failingSince ?? 0))
            }
        }
        return true
    }

    /// Lets go of an endpoint without an attempt (nothing was due after all).
    static func release(_ db: any SQLConnection, _ tenant: Int64, _ id: String, lease: Int64) async throws {
        try await db.run("UPDATE webhooks SET leased_until = 0 WHERE tenant_id = ? AND id = ? AND leased_until = ?", tenant, id, lease)
    }

    /// One attempt: the event, which attempt of it this was, and what came of it.
    struct Attempt: Sendable {
        var event: Int64
        var number: Int
        var status: Int?
        var error: String?
        var latencyMs: Int
    }

    private static func document(_ row: Row) throws(StorageError) -> WebhookDocument {
        WebhookDocument(id: try row.decode("id", as: String.self), url: try row.decode("url", as: String.self), events: types(try row.decodeIfPresent("event_types", as: String.self)),
                        createdAt: try row.decode("created_at", as: String.self), after: try row.decode("after_event_id", as: Int64.self), attempts: try row.decode("attempts", as: Int.self),
                        failingSince: try row.decodeIfPresent("failing_since", as: Int64.self), disabledAt: try row.decodeIfPresent("disabled_at", as: String.self))
    }

    private static func typesJSON(_ types: [String]) -> String {
        var writer = JSONWriter()
        writer.array(types) { writer, type in writer.string(type) }
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private static func types(_ text: String?) -> [String] {
        ((try? JSONReader.parse(text ?? "[]"))?.array ?? []).compactMap(\.string)
    }
}
