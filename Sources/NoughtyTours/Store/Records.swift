import SQLiteDB

/// Reading handles and status out of the local database.
enum Records {
    /// The tables whose changes can alter a status.
    static let statusTables: Set<String> = ["properties", "floors", "rooms", "panoramas", "queue_items"]

    static func floors(_ db: Database, propertyId: String) throws -> [Floor] {
        try db.query("SELECT id, name, number FROM floors WHERE property_id = ? ORDER BY number, id", propertyId).map {
            Floor(id: $0[0].string ?? "", name: $0[1].string, number: $0[2].int, propertyId: propertyId)
        }
    }

    static func floor(_ db: Database, id: String) throws -> Floor? {
        try db.first("SELECT id, name, number, property_id FROM floors WHERE id = ?", id).map {
            Floor(id: $0[0].string ?? "", name: $0[1].string, number: $0[2].int, propertyId: $0[3].string ?? "")
        }
    }

    static func rooms(_ db: Database, floorId: String) throws -> [Room] {
        try db.query("SELECT id, name FROM rooms WHERE floor_id = ? ORDER BY position", floorId).map {
            Room(id: $0[0].string ?? "", name: $0[1].string, floorId: floorId)
        }
    }

    /// A property's status: counts and queue states in a few indexed queries.
    static func status(_ db: Database, propertyId: String) throws -> PropertyStatus? {
        guard let row = try db.first("SELECT name, tour_id FROM properties WHERE id = ?", propertyId) else { return nil }
        let floors = try db.first("SELECT count(*) FROM floors WHERE property_id = ?", propertyId)?[0].int ?? 0
        let rooms = try db.first("SELECT count(*) FROM rooms JOIN floors ON floors.id = rooms.floor_id WHERE floors.property_id = ?", propertyId)?[0].int ?? 0
        let panoramas = try db.first("SELECT count(*) FROM panoramas WHERE property_id = ?", propertyId)?[0].int ?? 0
        var states: [String: Int] = [:]
        var uploaded = 0
        var failedPanoramas = 0
        for item in try db.query("SELECT kind, state, count(*), sum(attempts > 0) FROM queue_items WHERE property_id = ? GROUP BY kind, state", propertyId) {
            let kind = item[0].string, state = item[1].string ?? "", count = item[2].int ?? 0
            states[state, default: 0] += count
            if kind == "panorama" {
                if state == "done" { uploaded += count } else { failedPanoramas += item[3].int ?? 0 }
            }
        }
        let sync: SyncState
        if states["failed", default: 0] > 0 {
            sync = .failed
        } else if states["inflight", default: 0] > 0 {
            sync = .syncing
        } else if states["pending", default: 0] > 0 {
            sync = states["done", default: 0] > 0 ? .syncing : .pending
        } else {
            sync = .synced
        }
        return PropertyStatus(property: Property(id: propertyId, name: row[0].string ?? ""), tourId: row[1].string, sync: sync,
                              floorCount: floors, roomCount: rooms, panoramaCount: panoramas,
                              panoramasUploaded: uploaded, panoramasFailed: failedPanoramas)
    }
}

/// The durable upload queue's items, added in the same transaction as the write they carry.
enum Queue {
    enum Kind: String {
        case property, floor, plan, worldmap, panorama, deleteProperty
    }

    /// Adds an item; returns its id, for items that depend on it.
    @discardableResult
    static func add(_ db: Database, property: String, kind: Kind, entity: String, dependsOn: Int64?, payload: String? = nil) throws -> Int64 {
        try db.run("INSERT INTO queue_items (property_id, kind, entity_id, payload, depends_on, created_at) VALUES (?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                   property, kind.rawValue, entity, payload, dependsOn)
        return try db.first("SELECT last_insert_rowid()")?[0].int64 ?? 0
    }

    /// The newest item of an entity, for what depends on it.
    static func latest(_ db: Database, kind: Kind, entity: String) throws -> Int64? {
        try db.first("SELECT id FROM queue_items WHERE kind = ? AND entity_id = ? ORDER BY id DESC LIMIT 1", kind.rawValue, entity)?[0].int64
    }
}
