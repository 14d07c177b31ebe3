import NTAPIModel

/// What happened to a tenant's tours (docs/api.md "Events"): each change's event, written in
/// the transaction of the change.
package enum EventType: String, CaseIterable, Sendable {
    case propertyCreated = "property.created"
    case propertyUpdated = "property.updated"
    case propertyDeleted = "property.deleted"
    case floorUpdated = "floor.updated"
    case planApplied = "plan.applied"
    case worldMapStored = "worldmap.stored"
    case panoramaStored = "panorama.stored"
    case panoramaDeleted = "panorama.deleted"
    /// Its previews, and its tiles when it gets them, are made: it can be shown.
    case panoramaProcessed = "panorama.processed"
    /// Its image cannot be read (or is over the budgets), with the reason.
    case panoramaUnreadable = "panorama.unreadable"
    case uploadExpired = "upload.expired"
    /// Once a property's changes settle (`tourChangedQuietSeconds` without another), with its
    /// tour's counts.
    case tourChanged = "tour.changed"
    /// A webhook endpoint failed for `webhookRetryHours` and was disabled (its id in the data;
    /// no property: `propertyId` is empty).
    case webhookDisabled = "webhook.disabled"
    /// A grant was made or revoked (`POST`/`DELETE /v1/grants`; no property).
    case grantCreated = "grant.created"
    case grantRevoked = "grant.revoked"
    /// A share link was opened: its id, label and totals; at most one per link per
    /// `shareEventMinutes` (the first opening after them).
    case shareViewed = "share.viewed"
}

/// One event as the feed answers it: `{"id", "type", "propertyId", "createdAt", "data"}`; the
/// id is a decimal string, counted per tenant.
package struct EventRecord: JSONDocument, Equatable, Sendable {
    package var id: Int64
    package var type: String
    package var propertyId: String
    package var createdAt: String
    /// The event's data, a JSON object as stored.
    package var data: String
    /// The trace of the request that made it, for its webhook deliveries (not in the feed).
    package var traceparent: String? = nil

    package init(id: Int64, type: String, propertyId: String, createdAt: String, data: String, traceparent: String? = nil) {
        self.id = id
        self.type = type
        self.propertyId = propertyId
        self.createdAt = createdAt
        self.data = data
        self.traceparent = traceparent
    }

    package func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("id")
            writer.string(String(id))
            writer.key("type")
            writer.string(type)
            writer.key("propertyId")
            writer.string(propertyId)
            writer.key("createdAt")
            writer.string(createdAt)
            writer.key("data")
            writer.raw(data)
        }
    }
}

/// A page of the feed: the events after the cursor, and the cursor to ask from next (the last
/// event's id, or the cursor asked when there was none: the feed has no end).
package struct EventPage: JSONDocument, Sendable {
    package var items: [EventRecord]
    package var next: Int64

    package init(items: [EventRecord], next: Int64) {
        self.items = items
        self.next = next
    }

    package func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("items")
            writer.array(items) { writer, event in event.write(to: &writer) }
            writer.key("next")
            writer.string(String(next))
        }
    }
}
