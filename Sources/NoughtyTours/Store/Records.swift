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
            Floor(id: try $0.decode(0, as: String.self), name: try $0.decodeIfPresent(1, as: String.self), number: try $0.decodeIfPresent(2, as: Int.self), propertyId: propertyId)
        }
    }

    static func floor(_ db: Database, id: String) throws -> Floor? {
        try db.first("SELECT id, name, number, property_id FROM floors WHERE id = ?", id).map {
            Floor(id: try $0.decode(0, as: String.self), name: try $0.decodeIfPresent(1, as: String.self), number: try $0.decodeIfPresent(2, as: Int.self), propertyId: try $0.decode(3, as: String.self))
        }
    }

    static func rooms(_ db: Database, floorId: String) throws -> [Room] {
        try db.query("SELECT id, name FROM rooms WHERE floor_id = ? ORDER BY position", floorId).map {
            Room(id: try $0.decode(0, as: String.self), name: try $0.decodeIfPresent(1, as: String.self), floorId: floorId)
        }
    }

    /// A property's status: counts and queue states in a few indexed queries.
    static func status(_ db: Database, propertyId: String) throws -> PropertyStatus? {
        guard let row = try db.first("SELECT name, tour_id FROM properties WHERE id = ?", propertyId) else { return nil }
        let floors = try db.first("SELECT count(*) FROM floors WHERE property_id = ?", propertyId)?.decode(0, as: Int.self) ?? 0
        let rooms = try db.first("SELECT count(*) FROM rooms JOIN floors ON floors.id = rooms.floor_id WHERE floors.property_id = ?", propertyId)?.decode(0, as: Int.self) ?? 0
        let panoramas = try db.first("SELECT count(*) FROM panoramas WHERE property_id = ?", propertyId)?.decode(0, as: Int.self) ?? 0
        var states: [String: Int] = [:]
        var uploaded = 0
        var failedPanoramas = 0
        for item in try db.query("SELECT kind, state, count(*), sum(attempts > 0) FROM queue_items WHERE property_id = ? GROUP BY kind, state", propertyId) {
            let kind = try item.decodeIfPresent(0, as: String.self), state = try item.decode(1, as: String.self), count = try item.decode(2, as: Int.self)
            states[state, default: 0] += count
            if kind == "panorama" {
                if state == "done" { uploaded += count } else { failedPanoramas += try item.decode(3, as: Int.self) }
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
        return PropertyStatus(property: Property(id: propertyId, name: try row.decode(0, as: String.self)), tourId: try row.decodeIfPresent(1, as: String.self).flatMap(UUID.init(uuidString:)), sync: sync,
                              floorCount: floors, roomCount: rooms, panoramaCount: panoramas,
                              panoramasUploaded: uploaded, panoramasFailed: failedPanoramas)
    }
}
