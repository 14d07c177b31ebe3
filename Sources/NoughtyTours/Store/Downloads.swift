import NTAPIModel
import Foundation
import NTSQLiteDB

/// Bringing a server's tour into local storage (`download(propertyId:)`): pure SQL on a
/// connection. What the server holds replaces what this station holds, except local work
/// still queued, which is never overwritten:
/// - the property's name, floor count and metadata, unless its own upload is queued;
/// - each floor's number and name, unless its upload is queued;
/// - each floor's plan (rooms, structure, revision) and world map, unless a plan or a world
///   map of the floor is queued here;
/// - panoramas: the server's are added (without a local file) as already uploaded; one
///   uploaded from here and since deleted on the server goes; one still queued stays.
enum Downloads {
    /// The floors whose world map must be fetched: the server has one this station lacks (by
    /// digest), and no plan or map of the floor is queued here.
    static func worldMapsToFetch(_ db: Database, _ tour: TourDocument) throws -> [(floorId: String, map: TourDocument.WorldMap)] {
        try tour.floors.compactMap { floor in
            guard let map = floor.worldMap, try !hasQueuedPlan(db, floor.floor.id) else { return nil }
            let local = try db.first("SELECT world_map_sha256 FROM floors WHERE id = ?", floor.floor.id)?.decodeIfPresent(0, as: String.self)
            return local == map.sha256 ? nil : (floor.floor.id, map)
        }
    }

    /// Every id of the document is an id (they name local rows and files): a server that
    /// sends anything else is refused, and nothing is stored.
    static func check(_ tour: TourDocument) throws(NoughtyToursError) {
        var ids = [tour.property.id, tour.property.tourId]
        for floor in tour.floors {
            ids.append(floor.floor.id)
            ids += floor.floor.rooms.map(\.id)
            ids += floor.panoramas.flatMap { [$0.id, $0.floorId] + ($0.roomId.map { [$0] } ?? []) }
        }
        if let bad = ids.first(where: { !Identifier.isValid($0) }) {
            throw .transport("the server's tour document holds \"\(bad.prefix(64))\" where an id belongs")
        }
    }

    /// Applies the tour; `fetched` holds the world maps fetched for it, by floor. Returns the
    /// property, and the files no row names any more (to remove after the commit).
    static func apply(_ db: Database, _ tour: TourDocument, fetched: [String: StoredMap]) throws -> (Property, obsolete: [String]) {
        let property = tour.property
        if try db.first("SELECT 1 FROM queue_items WHERE property_id = ? AND kind = 'deleteProperty' AND state != 'done'", property.id) != nil {
            throw NoughtyToursError.invalidInput("property \(property.id) was deleted here and its deletion is still queued")
        }
        let (metadata, tourId) = (property.metadata, property.tourId)
        if try db.first("SELECT 1 FROM properties WHERE id = ?", property.id) == nil {
            try db.run("INSERT INTO properties (id, name, floor_count, metadata, tour_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                       property.id, property.name, property.floorCount, metadata, tourId, property.createdAt)
        } else {
            try db.run("UPDATE properties SET tour_id = coalesce(tour_id, ?) WHERE id = ?", tourId, property.id)
            if try !isQueued(db, kinds: [.property], entity: property.id) {
                try db.run("UPDATE properties SET name = ?, floor_count = ?, metadata = ? WHERE id = ?",
                           property.name, property.floorCount, metadata, property.id)
            }
        }
        var obsolete: [String] = []
        for floor in tour.floors {
            obsolete += try apply(db, floor, propertyId: property.id, fetched: fetched[floor.floor.id])
        }
        obsolete += try applyPanoramas(db, tour)
        return (Property(id: property.id, name: property.name), obsolete)
    }

    private static func apply(_ db: Database, _ tourFloor: TourDocument.Floor, propertyId: String, fetched: StoredMap?) throws -> [String] {
        let floor = tourFloor.floor
        if try db.first("SELECT 1 FROM floors WHERE id = ?", floor.id) == nil {
            try db.run("INSERT INTO floors (id, property_id, number, name) VALUES (?, ?, ?, ?)", floor.id, propertyId, floor.number, floor.name)
        } else if try !isQueued(db, kinds: [.floor], entity: floor.id) {
            try db.run("UPDATE floors SET number = ?, name = ? WHERE id = ?", floor.number, floor.name, floor.id)
        }
        // This station's own plan or map, still queued, stands.
        guard try !hasQueuedPlan(db, floor.id) else { return fetched.map { [$0.path] } ?? [] }
        let server = Set(floor.rooms.map(\.id))
        let local = Set(try Records.rooms(db, floorId: floor.id).map(\.id))
        try Rooms.remove(db, local.subtracting(server))
        for (position, room) in floor.rooms.enumerated() {
            try Rooms.upsert(db, id: room.id, floorId: floor.id, name: room.name, outline: room.outline, height: room.height,
                             capture: room.capture, position: position)
        }
        try db.run("UPDATE floors SET plan_revision = ?, structure = ? WHERE id = ?", floor.planRevision, tourFloor.plan?.structure, floor.id)
        let oldMap = try db.first("SELECT world_map_path FROM floors WHERE id = ?", floor.id)?.decodeIfPresent(0, as: String.self)
        if let fetched {
            try fetched.record(db, floorId: floor.id)
            return oldMap.map { [$0] } ?? []
        }
        guard tourFloor.worldMap == nil, let oldMap else { return [] } // the same map, or none on either side
        try StoredMap.clear(db, floorId: floor.id)
        return [oldMap]
    }

    /// The server's panoramas, set by set (a property has thousands: no statement per row).
    /// The document's panoramas are bound as one JSON array and read with json_each.
    private static func applyPanoramas(_ db: Database, _ tour: TourDocument) throws -> [String] {
        let propertyId = tour.property.id
        var list = JSONWriter()
        list.array(tour.floors.flatMap(\.panoramas)) { $1.write(to: &$0) }
        let onServer = String(decoding: list.bytes, as: UTF8.self)
        // New here: counted as uploaded (a done item), then their rows, without a local file.
        try db.run("""
            INSERT INTO queue_items (property_id, kind, entity_id, state, created_at)
            SELECT ?, 'panorama', json_extract(value, '$.id'), 'done', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM json_each(?)
            WHERE NOT EXISTS (SELECT 1 FROM panoramas WHERE id = json_extract(value, '$.id'))
            """, propertyId, onServer)
        try db.run("""
            INSERT INTO panoramas (id, property_id, floor_id, room_id, path, content_type, size, sha256, created_at, x, y, heading, camera_height)
            SELECT json_extract(value, '$.id'), ?, json_extract(value, '$.floorId'), json_extract(value, '$.roomId'), '',
                   json_extract(value, '$.contentType'), json_extract(value, '$.size'), json_extract(value, '$.sha256'),
                   json_extract(value, '$.createdAt'), json_extract(value, '$.position.x'), json_extract(value, '$.position.y'),
                   json_extract(value, '$.position.heading'), json_extract(value, '$.position.height')
            FROM json_each(?) WHERE true
            ON CONFLICT (id) DO NOTHING
            """, propertyId, onServer)
        // Known here and not queued: where the server keeps them (a newScan elsewhere
        // re-attaches panoramas).
        try db.run("""
            UPDATE panoramas SET floor_id = json_extract(s.value, '$.floorId'), room_id = json_extract(s.value, '$.roomId'),
                   x = json_extract(s.value, '$.position.x'), y = json_extract(s.value, '$.position.y'),
                   heading = json_extract(s.value, '$.position.heading'), camera_height = json_extract(s.value, '$.position.height')
            FROM json_each(?) AS s WHERE panoramas.id = json_extract(s.value, '$.id')
              AND NOT EXISTS (SELECT 1 FROM queue_items AS q WHERE q.entity_id = panoramas.id AND q.kind = 'panorama' AND q.state != 'done')
            """, onServer)
        // Uploaded once (nothing of them queued here), since deleted on the server: marked, then
        // their files read, their items and rows removed.
        try db.run("CREATE TEMP TABLE IF NOT EXISTS download_gone (id TEXT PRIMARY KEY)")
        try db.run("DELETE FROM download_gone")
        try db.run("""
            INSERT INTO download_gone (id) SELECT id FROM panoramas WHERE property_id = ?
              AND NOT EXISTS (SELECT 1 FROM queue_items AS q WHERE q.entity_id = panoramas.id AND q.kind = 'panorama' AND q.state != 'done')
              AND id NOT IN (SELECT json_extract(value, '$.id') FROM json_each(?))
            """, propertyId, onServer)
        let files = try db.query("SELECT path FROM panoramas WHERE id IN (SELECT id FROM download_gone)").compactMap { try $0.decodeIfPresent(0, as: String.self) }
        try db.run("DELETE FROM queue_items WHERE kind = 'panorama' AND entity_id IN (SELECT id FROM download_gone)")
        try db.run("DELETE FROM panoramas WHERE id IN (SELECT id FROM download_gone)")
        return files.filter { !$0.isEmpty }
    }

    private static func isQueued(_ db: Database, kinds: [Queue.Kind], entity: String) throws -> Bool {
        try kinds.contains { kind in
            try db.first("SELECT 1 FROM queue_items WHERE entity_id = ? AND kind = ? AND state != 'done'", entity, kind.rawValue) != nil
        }
    }

    private static func hasQueuedPlan(_ db: Database, _ floorId: String) throws -> Bool {
        try isQueued(db, kinds: [.plan, .worldmap], entity: floorId)
    }
}
