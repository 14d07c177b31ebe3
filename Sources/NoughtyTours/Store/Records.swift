import Foundation
import NTSQLiteDB

/// Reading handles and status out of the local database.
enum Records {
    /// The tables whose changes can alter a status.
    static let statusTables: Set<String> = ["properties", "floors", "rooms", "panoramas", "queue_items"]

    /// Stale handles: a deleted property, floor or room is `notFound` in every call.
    static func requireProperty(_ db: Database, _ id: String) throws {
        guard try db.first("SELECT 1 FROM properties WHERE id = ?", id) != nil else { throw NoughtyToursError.notFound }
    }

    static func requireFloor(_ db: Database, _ id: String) throws {
        guard try db.first("SELECT 1 FROM floors WHERE id = ?", id) != nil else { throw NoughtyToursError.notFound }
    }

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
        return PropertyStatus(property: Property(id: propertyId, name: row[0].string ?? ""), tourId: row[1].string.flatMap(UUID.init(uuidString:)), sync: sync,
                              floorCount: floors, roomCount: rooms, panoramaCount: panoramas,
                              panoramasUploaded: uploaded, panoramasFailed: failedPanoramas)
    }
}
