import Foundation
import NTAPIModel
import NTLogging
import NTServiceModel
import NTSQLiteDB

/// The SQL of properties, floors, plans, world maps and panoramas. Every function takes the
/// tenant, so no query can reach another tenant's rows; every value is a bound parameter.
/// Writers call these inside a transaction of the caller's.
package enum TourStore {
    // MARK: Properties

    package static func property(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> PropertyRecord? {
        let query = propertyQuery(tenant, id)
        return try await db.query(query.sql, arguments: query.arguments).first.map(PropertyRecord.init)
    }

    /// The property's row: one statement, a read of its own (`SQLStorage.statement`).
    static func propertyQuery(_ tenant: Int64, _ id: String) -> SQLStatement {
        SQLStatement("SELECT * FROM properties WHERE tenant_id = ? AND id = ?", tenant, id)
    }

    /// Creates (assigning the tour id, once) or updates a property. Returns it and whether it
    /// was created.
    package static func putProperty(_ db: any SQLConnection, _ tenant: Int64, _ id: String, _ input: PropertyInput, at now: WallClockTime) async throws -> (PropertyRecord, created: Bool) {
        var writer = JSONWriter()
        writer.object(input.metadata)
        let metadata = String(decoding: writer.bytes, as: UTF8.self)
        if let existing = try await property(db, tenant, id) {
            // Both metadata texts are canonical: equal text is equal metadata.
            if existing.name != input.name || existing.floorCount != input.floorCount || existing.metadata != metadata {
                try await db.run("UPDATE properties SET name = ?, floor_count = ?, metadata = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
                           input.name, input.floorCount, metadata, Timestamp.text(now), tenant, id)
                try await EventStore.append(db, tenant, .propertyUpdated, property: id, at: now) { data in
                    data.key("name"); data.string(input.name)
                    data.key("floorCount"); data.int(input.floorCount)
                }
            }
            return (try await property(db, tenant, id) ?? existing, false)
        }
        let stamp = Timestamp.text(now)
        try await db.run("INSERT INTO properties (tenant_id, id, tour_id, name, floor_count, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   tenant, id, Identifier.make(), input.name, input.floorCount, metadata, stamp, stamp)
        guard let created = try await property(db, tenant, id) else { throw StorageError(.corrupt, "property vanished after insert") }
        try await EventStore.append(db, tenant, .propertyCreated, property: id, at: now) { data in
            data.key("name"); data.string(created.name)
            data.key("floorCount"); data.int(created.floorCount)
            data.key("tourId"); data.string(created.tourId)
        }
        return (created, true)
    }

    /// A page of properties in id order, after the cursor; the cursor of the next page.
    /// A page of the tenant's properties, or with `grant` of that grant's.
    package static func properties(_ db: any SQLConnection, _ tenant: Int64, grant: String? = nil, limit: Int, after: String?) async throws -> ([PropertyRecord], next: String?) {
        let rows = if let grant {
            try await db.query("""
                SELECT properties.* FROM properties JOIN grant_properties ON grant_properties.tenant_id = properties.tenant_id
                    AND grant_properties.grant_id = ? AND grant_properties.property_id = properties.id
                WHERE properties.tenant_id = ? AND properties.id > ? ORDER BY properties.id LIMIT ?
                """, grant, tenant, after ?? "", limit + 1)
        } else {
            try await db.query("SELECT * FROM properties WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?", tenant, after ?? "", limit + 1)
        }
        let page = try rows.prefix(limit).map(PropertyRecord.init)
        return (page, rows.count > limit ? page.last?.id : nil)
    }

    /// Deletes a property and everything under it; returns the files to remove afterwards, or
    /// nil when there is no such property.
    package static func deleteProperty(_ db: any SQLConnection, _ tenant: Int64, _ id: String, at now: WallClockTime) async throws -> [BlobKey]? {
        guard try await property(db, tenant, id) != nil else { return nil }
        var blobs = try await db.query("SELECT id FROM panoramas WHERE tenant_id = ? AND property_id = ?", tenant, id)
            .map { BlobKey(tenant: tenant, kind: .panorama, id: try $0.decode("id", as: String.self)) }
        blobs += try await db.query("""
            SELECT coalesce(world_map_file, id) FROM floors
            WHERE tenant_id = ? AND id IN (SELECT id FROM floors WHERE tenant_id = ? AND property_id = ?) AND world_map_sha256 IS NOT NULL
            """, tenant, tenant, id)
            .map { BlobKey(tenant: tenant, kind: .worldMap, id: try $0.decode(0, as: String.self)) }
        // Panoramas go with their floors (ON DELETE CASCADE), floors with the property.
        try await db.run("DELETE FROM properties WHERE tenant_id = ? AND id = ?", tenant, id)
        try await EventStore.append(db, tenant, .propertyDeleted, property: id, at: now) { _ in }
        return blobs
    }

    /// What the server holds for a property (docs/api.md "ServerStatus").
    package static func status(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> ServerStatusDocument? {
        let answers = try await db.queries([
            propertyQuery(tenant, id),
            SQLStatement("SELECT count(*) FROM floors WHERE tenant_id = ? AND property_id = ?", tenant, id),
            SQLStatement("""
                SELECT count(*) FROM rooms
                WHERE tenant_id = ? AND floor_id IN (SELECT id FROM floors WHERE tenant_id = ? AND property_id = ?)
                """, tenant, tenant, id),
            SQLStatement("SELECT count(*), coalesce(sum(size), 0) FROM panoramas WHERE tenant_id = ? AND property_id = ?", tenant, id),
        ])
        guard let property = try answers[0].first.map(PropertyRecord.init) else { return nil }
        let panoramas = answers[3].first
        return ServerStatusDocument(propertyId: id, tourId: property.tourId, floorCount: try answers[1].first?.decode(0, as: Int.self) ?? 0,
                                    roomCount: try answers[2].first?.decode(0, as: Int.self) ?? 0, panoramaCount: try panoramas?.decode(0, as: Int.self) ?? 0,
                                    panoramaBytes: try panoramas?.decode(1, as: Int64.self) ?? 0, updatedAt: property.updatedAt)
    }

    static func touch(_ db: any SQLConnection, _ tenant: Int64, property id: String, at now: WallClockTime) async throws {
        try await db.run("UPDATE properties SET updated_at = ? WHERE tenant_id = ? AND id = ?", Timestamp.text(now), tenant, id)
    }

    // MARK: Floors

    package static func floor(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> FloorRecord? {
        let answers = try await db.queries([
            SQLStatement("SELECT * FROM floors WHERE tenant_id = ? AND id = ?", tenant, id),
            SQLStatement("SELECT * FROM rooms WHERE tenant_id = ? AND floor_id = ? ORDER BY position", tenant, id),
        ])
        guard let row = answers[0].first else { return nil }
        return try FloorRecord(row, rooms: try answers[1].map(RoomRecord.init))
    }

    package static func putFloor(_ db: any SQLConnection, _ tenant: Int64, propertyId: String, floorId: String, _ input: FloorInput, at now: WallClockTime) async throws -> (FloorRecord, created: Bool) {
        guard try await property(db, tenant, propertyId) != nil else { throw ServiceError.notFound("property", propertyId) }
        if let existing = try await floor(db, tenant, floorId) {
            guard existing.propertyId == propertyId else { throw ServiceError.conflict("floor \(floorId) belongs to another property") }
            if existing.number != input.number || existing.name != input.name {
                try await db.run("UPDATE floors SET number = ?, name = ? WHERE tenant_id = ? AND id = ?", input.number, input.name, tenant, floorId)
                try await touch(db, tenant, property: propertyId, at: now)
                try await floorUpdated(db, tenant, propertyId: propertyId, floorId: floorId, input, at: now)
            }
            return (try await floor(db, tenant, floorId) ?? existing, false)
        }
        try await db.run("INSERT INTO floors (tenant_id, id, property_id, number, name) VALUES (?, ?, ?, ?, ?)",
                   tenant, floorId, propertyId, input.number, input.name)
        try await touch(db, tenant, property: propertyId, at: now)
        try await floorUpdated(db, tenant, propertyId: propertyId, floorId: floorId, input, at: now)
        guard let created = try await floor(db, tenant, floorId) else { throw StorageError(.corrupt, "floor vanished after insert") }
        return (created, true)
    }

    private static func floorUpdated(_ db: any SQLConnection, _ tenant: Int64, propertyId: String, floorId: String, _ input: FloorInput, at now: WallClockTime) async throws {
        try await EventStore.append(db, tenant, .floorUpdated, property: propertyId, at: now) { data in
            data.key("floorId"); data.string(floorId)
            data.key("number"); data.int(input.number)
            data.key("name"); data.string(input.name)
        }
    }

    /// Sets the order of the floor's walk: the listed panoramas first, in the order listed, the
    /// rest after them as captured (their order cleared). Returns the floor's panoramas in walk
    /// order; nil when the tenant has no such floor. A listed id that is not a panorama of the
    /// floor is 400 and changes nothing.
    package static func setPanoramaOrder(_ db: any SQLConnection, _ tenant: Int64, floorId: String, _ ids: [String],
                                         at now: WallClockTime) async throws -> [PanoramaRecord]? {
        guard let floor = try await db.first("SELECT property_id, number, name FROM floors WHERE tenant_id = ? AND id = ?", tenant, floorId) else { return nil }
        let present = Set(try await db.query("SELECT id FROM panoramas WHERE tenant_id = ? AND floor_id = ?", tenant, floorId)
            .map { try $0.decode("id", as: String.self) })
        if let stranger = ids.first(where: { !present.contains($0) }) {
            throw ServiceError.badRequest("panoramaIds names \(stranger), which is not a panorama of floor \(floorId)")
        }
        // One statement, the ids bound as one JSON array: each listed panorama its place, the
        // floor's others none.
        var list = JSONWriter()
        list.array(ids) { $0.string($1) }
        try await db.run(db.dialect.pick(
            sqlite: """
                UPDATE panoramas SET walk_order = (SELECT CAST(key AS INTEGER) FROM json_each(?) WHERE value = panoramas.id)
                WHERE tenant_id = ? AND floor_id = ?
                """,
            postgresql: """
                UPDATE panoramas SET walk_order = (SELECT listed.place - 1 FROM json_array_elements_text(CAST(? AS json)) WITH ORDINALITY AS listed(id, place)
                                                   WHERE listed.id = panoramas.id)
                WHERE tenant_id = ? AND floor_id = ?
                """), String(decoding: list.bytes, as: UTF8.self), tenant, floorId)
        let propertyId = try floor.decode("property_id", as: String.self)
        try await touch(db, tenant, property: propertyId, at: now)
        // The floor's walk changed: its event, as for its name (the tour's follows when changes settle).
        try await floorUpdated(db, tenant, propertyId: propertyId, floorId: floorId,
                               FloorInput(number: try floor.decode("number", as: Int.self), name: try floor.decodeIfPresent("name", as: String.self)), at: now)
        return try await db.query("SELECT * FROM panoramas WHERE tenant_id = ? AND floor_id = ?", tenant, floorId).map(PanoramaRecord.init)
            .sorted(by: PanoramaDocument.walkOrder)
    }

    // MARK: Plans

    /// What applying a plan did: the answer, and the world map file to remove once committed.
    package struct PlanOutcome {
        package var answer: [UInt8]
        package var clearedWorldMap: BlobKey?
    }

    /// Applies a plan (docs/api.md "Plan upload"), or answers what it answered before for a planId
    /// already applied.
    package static func applyPlan(_ db: any SQLConnection, _ tenant: Int64, floorId: String, _ upload: PlanUpload, at now: WallClockTime) async throws -> PlanOutcome {
        let plan = upload.plan
        if let applied = try await db.first("SELECT floor_id, request_sha256, result FROM plans WHERE tenant_id = ? AND id = ?", tenant, plan.planId) {
            guard try applied.decode("floor_id", as: String.self) == floorId, try applied.decode("request_sha256", as: String.self) == upload.digest else {
                throw ServiceError.conflict("plan \(plan.planId) was already applied with other content")
            }
            return PlanOutcome(answer: Array((try applied.decode("result", as: String.self)).utf8), clearedWorldMap: nil)
        }
        guard let floor = try await floor(db, tenant, floorId) else { throw ServiceError.notFound("floor", floorId) }
        // A room id belongs to one floor for good: moving it would orphan its panoramas' meaning.
        for room in plan.rooms {
            if let other = try await db.first("SELECT floor_id FROM rooms WHERE tenant_id = ? AND id = ?", tenant, room.id),
               try other.decode("floor_id", as: String.self) != floorId {
                throw ServiceError.conflict("room \(room.id) belongs to another floor")
            }
        }
        var clearedWorldMap: BlobKey?
        switch plan.mode {
        case .continueScan:
            guard floor.continuable else {
                throw ServiceError(.notContinuable, "floor \(floorId) has no plan and saved world map to continue")
            }
            var position = (floor.rooms.count)
            let existing = Set(floor.rooms.map(\.id))
            for room in plan.rooms {
                if existing.contains(room.id) {
                    // Kept: id, name, panoramas. Updated: geometry.
                    try await db.run("UPDATE rooms SET outline = ?, height = ?, capture = coalesce(?, capture) WHERE tenant_id = ? AND id = ?",
                               room.outline, room.height, room.capture, tenant, room.id)
                } else {
                    try await db.run("INSERT INTO rooms (tenant_id, id, floor_id, name, outline, height, capture, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                               tenant, room.id, floorId, room.name, room.outline, room.height, room.capture, position)
                    position += 1
                }
            }
        case .newScan:
            let kept = Set(plan.rooms.map(\.id))
            for room in floor.rooms where !kept.contains(room.id) {
                // Nothing is lost: the panoramas of a removed room stay on the floor.
                try await db.run("UPDATE panoramas SET room_id = NULL WHERE tenant_id = ? AND room_id = ?", tenant, room.id)
                try await db.run("DELETE FROM rooms WHERE tenant_id = ? AND id = ?", tenant, room.id)
            }
            for (position, room) in plan.rooms.enumerated() {
                try await db.run("""
                    INSERT INTO rooms (tenant_id, id, floor_id, name, outline, height, capture, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (tenant_id, id) DO UPDATE SET name = excluded.name, outline = excluded.outline,
                        height = excluded.height, capture = excluded.capture, position = excluded.position
                    """, tenant, room.id, floorId, room.name, room.outline, room.height, room.capture, position)
            }
            // The old world map belongs to the old plan: a new one follows the new plan.
            if let key = floor.worldMapKey(tenant) {
                clearedWorldMap = key
                try await db.run("UPDATE floors SET world_map_sha256 = NULL, world_map_size = NULL, world_map_file = NULL WHERE tenant_id = ? AND id = ?",
                           tenant, floorId)
            }
        }
        try await db.run("UPDATE floors SET plan_revision = plan_revision + 1, structure = coalesce(?, structure), plan_updated_at = ? WHERE tenant_id = ? AND id = ?",
                   plan.structure, Timestamp.text(now), tenant, floorId)
        try await touch(db, tenant, property: floor.propertyId, at: now)
        guard let applied = try await self.floor(db, tenant, floorId) else { throw StorageError(.corrupt, "floor vanished") }
        let answer = applied.document.jsonBytes
        try await db.run("INSERT INTO plans (tenant_id, id, floor_id, mode, request_sha256, result, applied_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   tenant, plan.planId, floorId, plan.mode.rawValue, upload.digest, String(decoding: answer, as: UTF8.self), Timestamp.text(now))
        try await EventStore.append(db, tenant, .planApplied, property: floor.propertyId, at: now) { data in
            data.key("floorId"); data.string(floorId)
            data.key("planId"); data.string(plan.planId)
            data.key("revision"); data.int(applied.planRevision)
            data.key("mode"); data.string(plan.mode.rawValue)
            data.key("rooms"); data.int(applied.rooms.count)
        }
        return PlanOutcome(answer: answer, clearedWorldMap: clearedWorldMap)
    }

    // MARK: World maps

    package enum WorldMapChange: Sendable { case created, replaced, unchanged }

    /// What recording a world map did: the change, the floor after it, and the file it
    /// replaced (to remove once committed).
    package struct WorldMapOutcome: Sendable {
        package var change: WorldMapChange
        package var floor: FloorRecord
        package var replaced: BlobKey?
    }

    /// Records a floor's world map whose file is already in place under the name `file`.
    package static func setWorldMap(_ db: any SQLConnection, _ tenant: Int64, floorId: String, sha256: String, size: Int64, file: String, at now: WallClockTime) async throws -> WorldMapOutcome {
        guard let floor = try await floor(db, tenant, floorId) else { throw ServiceError.notFound("floor", floorId) }
        if floor.worldMapSHA256 == sha256 { return WorldMapOutcome(change: .unchanged, floor: floor) }
        try await db.run("UPDATE floors SET world_map_sha256 = ?, world_map_size = ?, world_map_file = ? WHERE tenant_id = ? AND id = ?",
                   sha256, size, file, tenant, floorId)
        try await touch(db, tenant, property: floor.propertyId, at: now)
        try await EventStore.append(db, tenant, .worldMapStored, property: floor.propertyId, at: now) { data in
            data.key("floorId"); data.string(floorId)
            data.key("size"); data.int(size)
            data.key("sha256"); data.string(sha256)
        }
        guard let updated = try await self.floor(db, tenant, floorId) else { throw StorageError(.corrupt, "floor vanished") }
        return WorldMapOutcome(change: floor.worldMapSHA256 == nil ? .created : .replaced, floor: updated, replaced: floor.worldMapKey(tenant))
    }

    // MARK: Panoramas

    package static func panorama(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> PanoramaRecord? {
        try await db.first("SELECT * FROM panoramas WHERE tenant_id = ? AND id = ?", tenant, id).map(PanoramaRecord.init)
    }

    /// Where a new panorama goes: its floor's property, after checking the room is on that floor.
    package static func panoramaPlace(_ db: any SQLConnection, _ tenant: Int64, floorId: String, roomId: String?) async throws -> String {
        guard let propertyId = try await db.first("SELECT property_id FROM floors WHERE tenant_id = ? AND id = ?", tenant, floorId)?
            .decode("property_id", as: String.self) else { throw ServiceError.notFound("floor", floorId) }
        if let roomId {
            guard try await db.first("SELECT 1 FROM rooms WHERE tenant_id = ? AND id = ? AND floor_id = ?", tenant, roomId, floorId) != nil else {
                throw ServiceError.notFound("room \(roomId) on floor", floorId)
            }
        }
        return propertyId
    }

    package static func insertPanorama(_ db: any SQLConnection, _ tenant: Int64, id: String, floorId: String, roomId: String?, position: PanoramaPosition?,
                               contentType: String, size: Int64, sha256: String, at now: WallClockTime) async throws -> PanoramaRecord {
        let propertyId = try await panoramaPlace(db, tenant, floorId: floorId, roomId: roomId)
        try await db.run("""
            INSERT INTO panoramas (tenant_id, id, property_id, floor_id, room_id, content_type, size, sha256, created_at, x, y, heading, camera_height, state)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'processing')
            """, tenant, id, propertyId, floorId, roomId, contentType, size, sha256, Timestamp.text(now), position?.x, position?.y, position?.heading,
            position?.height)
        try await touch(db, tenant, property: propertyId, at: now)
        try await EventStore.append(db, tenant, .panoramaStored, property: propertyId, at: now) { data in
            data.key("id"); data.string(id)
            data.key("floorId"); data.string(floorId)
            data.key("roomId"); data.string(roomId)
            data.key("position")
            if let position { position.write(to: &data) } else { data.null() }
            data.key("size"); data.int(size)
            data.key("sha256"); data.string(sha256)
        }
        guard let stored = try await panorama(db, tenant, id) else { throw StorageError(.corrupt, "panorama vanished after insert") }
        return stored
    }

    /// What a panorama's processing came to, recorded once with its event (`panorama.processed`
    /// with the previews and whether it has tiles, or `panorama.unreadable` with the reason):
    /// the daemon whose write finds it still processing, the same stored bytes. Nothing when
    /// another daemon recorded it first, or the panorama is gone.
    package static func recordProcessed(_ db: any SQLConnection, _ tenant: Int64, _ panorama: PanoramaRecord, unreadable reason: String?,
                                geometry: PanoramaFileGeometry, capturedAt: String?, previews: [Int], tiled: Bool, at now: WallClockTime) async throws {
        let state: PanoramaState = reason == nil ? .ready : .unreadable
        guard try await db.run("""
            UPDATE panoramas SET state = ?, unreadable_reason = ?, geometry = ?, captured_at = ?
            WHERE tenant_id = ? AND id = ? AND sha256 = ? AND state = 'processing'
            """, state.rawValue, reason, String(decoding: geometry.jsonBytes, as: UTF8.self), capturedAt, tenant, panorama.id, panorama.sha256) == 1 else { return }
        try await EventStore.append(db, tenant, reason == nil ? .panoramaProcessed : .panoramaUnreadable, property: panorama.propertyId, at: now,
                                    changesTour: false) { data in
            data.key("id"); data.string(panorama.id)
            data.key("floorId"); data.string(panorama.floorId)
            if let reason {
                data.key("reason"); data.string(reason)
            } else {
                data.key("previewWidths"); data.array(previews) { $0.int($1) }
                data.key("tiles"); data.bool(tiled)
            }
        }
    }

    /// Panoramas still processing that were stored before `cutoff` (a daemon stopped before it
    /// finished them), at most `limit`, across tenants.
    package static func unfinishedPanoramas(_ db: any SQLConnection, storedBefore cutoff: String, limit: Int) async throws -> [(tenant: Int64, panorama: PanoramaRecord)] {
        try await db.query("SELECT * FROM panoramas WHERE state = 'processing' AND created_at < ? ORDER BY created_at LIMIT ?", cutoff, limit)
            .map { (try $0.decode("tenant_id", as: Int64.self), try PanoramaRecord($0)) }
    }

    /// Which of `ids` have a panorama row: one query, the ids bound as one JSON array.
    package static func storedPanoramas(_ db: any SQLConnection, _ tenant: Int64, among ids: [String]) async throws -> Set<String> {
        var list = JSONWriter()
        list.array(ids) { $0.string($1) }
        let rows = try await db.query(db.dialect.pick(
            sqlite: "SELECT id FROM panoramas WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))",
            postgresql: "SELECT id FROM panoramas WHERE tenant_id = ? AND id = ANY (ARRAY(SELECT json_array_elements_text(CAST(? AS json))))"),
                                tenant, String(decoding: list.bytes, as: UTF8.self))
        return Set(try rows.map { try $0.decode("id", as: String.self) })
    }

    package static func deletePanorama(_ db: any SQLConnection, _ tenant: Int64, _ id: String, at now: WallClockTime) async throws -> Bool {
        guard let existing = try await panorama(db, tenant, id) else { return false }
        try await db.run("DELETE FROM panoramas WHERE tenant_id = ? AND id = ?", tenant, id)
        try await touch(db, tenant, property: existing.propertyId, at: now)
        try await EventStore.append(db, tenant, .panoramaDeleted, property: existing.propertyId, at: now) { data in
            data.key("id"); data.string(id)
            data.key("floorId"); data.string(existing.floorId)
        }
        return true
    }

    // MARK: Tours

    /// The tour document: the property, its floors with plan, rooms (with capture output) and
    /// world map, their panoramas with content URLs.
    package static func tour(_ db: any SQLConnection, _ tenant: Int64, tourId: String) async throws -> TourDocument? {
        try await tour(db, tenant, TourProperty(key: "tour_id", value: tourId))
    }

    /// The tour document of a property, by the property's id.
    package static func tour(_ db: any SQLConnection, _ tenant: Int64, propertyId: String) async throws -> TourDocument? {
        try await tour(db, tenant, TourProperty(key: "id", value: propertyId))
    }

    /// Which property a tour document is of: by its tour id or its own.
    private struct TourProperty {
        let key: String
        let value: String
    }

    /// The property, its floors, their rooms and their panoramas: four queries that need no
    /// answer of each other, in one batch (one round trip), whatever the number of floors.
    private static func tour(_ db: any SQLConnection, _ tenant: Int64, _ which: TourProperty) async throws -> TourDocument? {
        // Each a whole clause: `key` is one of the two column names above, never a value. The
        // property is a scalar subquery (`=`, not IN): SQLite then searches the floors by their
        // property's index.
        let propertyIds = "SELECT id FROM properties WHERE tenant_id = ? AND \(which.key) = ?"
        let floorIds = "SELECT id FROM floors WHERE tenant_id = ? AND property_id = (\(propertyIds))"
        let answers = try await db.queries([
            SQLStatement("SELECT * FROM properties WHERE tenant_id = ? AND \(which.key) = ?", tenant, which.value),
            SQLStatement("SELECT * FROM floors WHERE tenant_id = ? AND property_id = (\(propertyIds)) ORDER BY number, id",
                         tenant, tenant, which.value),
            SQLStatement("SELECT * FROM rooms WHERE tenant_id = ? AND floor_id IN (\(floorIds)) ORDER BY floor_id, position",
                         tenant, tenant, tenant, which.value),
            SQLStatement("SELECT * FROM panoramas WHERE tenant_id = ? AND floor_id IN (\(floorIds)) ORDER BY floor_id, created_at, id",
                         tenant, tenant, tenant, which.value),
        ])
        guard let row = answers[0].first else { return nil }
        let property = try PropertyRecord(row)
        let rooms = Dictionary(grouping: try answers[2].map(RoomRecord.init), by: \.floorId)
        let panoramas = Dictionary(grouping: try answers[3].map(PanoramaRecord.init), by: \.floorId)
        let tourFloors = try answers[1].map { row -> TourDocument.Floor in
            let floor = try FloorRecord(row, rooms: rooms[try row.decode("id", as: String.self)] ?? [])
            return TourDocument.Floor(
                floor: floor.document,
                plan: floor.planRevision > 0 ? TourDocument.Plan(revision: floor.planRevision, structure: floor.structure, updatedAt: floor.planUpdatedAt) : nil,
                worldMap: floor.worldMap.map { TourDocument.WorldMap(sha256: $0.sha256, size: $0.size, url: "/v1/floors/\(floor.id)/worldmap") },
                panoramas: panoramas[floor.id] ?? [])
        }
        return TourDocument(tourId: property.tourId, property: property, floors: tourFloors)
    }
}
