import NTAPIModel
import Foundation
import NTSQLiteDB

/// Whether a scan starts from nothing or continues the plan the floor has (the seed's
/// StructureCaptureMode).
public enum StructureCaptureMode: String, Sendable {
    /// Maps the floor from scratch: the new plan replaces the old one.
    case newScan
    /// Adds rooms to the existing plan: rooms already on the floor keep their identity and
    /// their panoramas. Only for floors that offer it (a plan and a saved world map).
    case continueScan
}

/// One room of a captured plan. `room` names a room already on the floor (its geometry is
/// updated); nil makes a new room.
public struct CapturedRoom: Sendable {
    public var room: Room?
    public var name: String?
    /// The floor polygon in metres, in the floor's plan coordinates: [[x, y], …].
    public var outline: [[Double]]
    public var height: Double?
    /// The opaque output the capture produced for the room: a JSON value, uploaded with the
    /// plan and kept by the server as that same value.
    public var capture: Data?

    public init(room: Room? = nil, name: String?, outline: [[Double]], height: Double? = nil, capture: Data? = nil) {
        self.room = room
        self.name = name
        self.outline = outline
        self.height = height
        self.capture = capture
    }
}

/// Structure capture's confirm step, as a call: the floor's plan is applied locally at once
/// (rooms exist offline) and queued for upload with the floor's saved world map.
public struct StructureCapture: Sendable {
    let store: LocalStore

    /// Applies a captured plan to a floor; returns the floor's rooms afterwards. `structure`
    /// is the floor's opaque capture output, a JSON value like each room's `capture`.
    @discardableResult
    public func apply(floor: Floor, mode: StructureCaptureMode, rooms captured: [CapturedRoom],
                      structure: Data? = nil, worldMap: URL? = nil) async throws(NoughtyToursError) -> [Room] {
        let structureText = try structure.map { data throws(NoughtyToursError) in try CaptureOutput.text(data, "the structure") }
        // The server's limits (docs/api.md, the same constants), so that nothing is queued that it
        // would refuse.
        guard captured.count <= PlanInput.maxRooms else { throw .invalidInput("a plan has at most \(PlanInput.maxRooms) rooms") }
        guard captured.reduce(0, { $0 + $1.outline.count }) <= PlanInput.maxPoints else {
            throw .invalidInput("a plan has at most \(PlanInput.maxPoints) outline points in all its rooms")
        }
        var plan: [PlanRoom] = []
        for room in captured {
            guard PlanInput.pointsPerRoom.contains(room.outline.count), room.outline.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isFinite) }) else {
                throw .invalidInput("a room outline needs \(PlanInput.pointsPerRoom.lowerBound) to \(PlanInput.pointsPerRoom.upperBound) points of [x, y]")
            }
            var name: String?
            if let given = room.name {
                do { name = try DisplayName.validated(given, "a room name") } catch { throw .invalidInput(error.message) }
            }
            if let height = room.height, !(height > 0 && height < 100) { throw .invalidInput("a room height is between 0 and 100 metres") }
            if let existing = room.room, existing.floorId != floor.id { throw .invalidInput("room \(existing.id) is on another floor") }
            plan.append(PlanRoom(id: room.room?.id, name: name, outline: room.outline, height: room.height,
                                 capture: try room.capture.map { data throws(NoughtyToursError) in try CaptureOutput.text(data, "a room's capture") }))
        }
        var storedMap: StoredMap?
        if let worldMap { storedMap = try await copyWorldMap(worldMap, floor: floor) }
        do {
            return try await store.write { [plan, storedMap] db in
                try Plans.apply(db, floor: floor, mode: mode, plan, structure: structureText, worldMap: storedMap)
            }
        } catch {
            if let storedMap { await store.removeFiles([storedMap.path]) }
            throw error
        }
    }

    /// Saves the floor's world map on its own (replacing the one it had) and queues its upload
    /// after whatever of the floor was queued last. With a plan, the floor becomes continuable.
    public func saveWorldMap(_ url: URL, for floor: Floor) async throws(NoughtyToursError) {
        let stored = try await copyWorldMap(url, floor: floor)
        do {
            let replaced = try await store.write { db -> String? in
                guard let row = try db.first("SELECT world_map_path FROM floors WHERE id = ?", floor.id) else { throw NoughtyToursError.notFound }
                try stored.record(db, floorId: floor.id)
                try Queue.add(db, property: floor.propertyId, kind: .worldmap, entity: floor.id,
                              dependsOn: try Queue.latest(db, kinds: [.floor, .plan, .worldmap], entity: floor.id), payload: stored.path)
                return try row.decodeIfPresent(0, as: String.self)
            }
            // The old map's upload, if still queued, finds its file gone: nothing left to send.
            if let replaced { await store.removeFiles([replaced]) }
        } catch {
            await store.removeFiles([stored.path])
            throw error
        }
    }

    /// Whether `.continueScan` may be used on the floor: it has a plan and a saved world map
    /// (the floors a property event would raise continueStructureCapture for).
    public func isContinuable(_ floor: Floor) async throws(NoughtyToursError) -> Bool {
        try await store.read { db in
            try Records.requireFloor(db, floor.id)
            return try Plans.isContinuable(db, floorId: floor.id)
        }
    }

    public func continuableFloors(of property: Property) async throws(NoughtyToursError) -> [Floor] {
        try await store.read { db in
            try Records.requireProperty(db, property.id)
            return try Records.floors(db, propertyId: property.id).filter { try Plans.isContinuable(db, floorId: $0.id) }
        }
    }

    private func copyWorldMap(_ url: URL, floor: Floor) async throws(NoughtyToursError) -> StoredMap {
        let target = StoredMap.newPath(store.directory, floorId: floor.id)
        let digest = try await store.files { () throws(NoughtyToursError) in try LocalFiles.copy(url, to: URL(fileURLWithPath: target)).1 }
        return StoredMap(path: target, sha256: digest)
    }
}

/// A floor's saved world map in local storage: its file and the file's SHA-256.
struct StoredMap: Sendable, Equatable {
    var path: String
    var sha256: String

    static func newPath(_ directory: URL, floorId: String) -> String {
        directory.appendingPathComponent("worldmap-\(floorId)-\(UUID().uuidString.lowercased())").path
    }

    func record(_ db: Database, floorId: String) throws {
        try db.run("UPDATE floors SET world_map_path = ?, world_map_sha256 = ? WHERE id = ?", path, sha256, floorId)
    }

    static func clear(_ db: Database, floorId: String) throws {
        try db.run("UPDATE floors SET world_map_path = NULL, world_map_sha256 = NULL WHERE id = ?", floorId)
    }
}

/// A room of a plan as it is stored and uploaded: `id` names a room on the floor (nil: a new
/// one); `capture` is JSON text.
struct PlanRoom: Sendable {
    var id: String?
    var name: String?
    var outline: [[Double]]
    var height: Double?
    var capture: String?
}

/// The capture's opaque output: any JSON value, validated once and kept as canonical text
/// (the same JSON value; the server keeps it the same way).
enum CaptureOutput {
    static func text(_ data: Data, _ what: String) throws(NoughtyToursError) -> String {
        do {
            return try JSONReader.parse(Array(data)).compactText
        } catch {
            throw .invalidInput("\(what) is not a JSON value (\(error.message))")
        }
    }
}

/// Applying plans to the local database, with docs/api.md's semantics.
enum Plans {
    static func isContinuable(_ db: Database, floorId: String) throws -> Bool {
        try db.first("SELECT 1 FROM floors WHERE id = ? AND plan_revision > 0 AND world_map_path IS NOT NULL", floorId) != nil
    }

    static func apply(_ db: Database, floor: Floor, mode: StructureCaptureMode, _ plan: [PlanRoom], structure: String?, worldMap: StoredMap?) throws -> [Room] {
        guard let row = try db.first("SELECT plan_revision, world_map_path FROM floors WHERE id = ?", floor.id) else { throw NoughtyToursError.notFound }
        // Rooms are known by id alone: a handle taken before a rename still names its room.
        let existing = Set(try Records.rooms(db, floorId: floor.id).map(\.id))
        for room in plan {
            if let id = room.id, !existing.contains(id) { throw NoughtyToursError.notFound } // a room deleted since
        }
        var planRooms: [(id: String, room: PlanRoom)] = []
        switch mode {
        case .continueScan:
            guard try isContinuable(db, floorId: floor.id) else { throw NoughtyToursError.notContinuable }
            var position = existing.count
            for room in plan {
                if let known = room.id {
                    // Kept: id, name, panoramas. Updated: geometry.
                    try db.run("UPDATE rooms SET outline = ?, height = ?, capture = coalesce(?, capture) WHERE id = ?",
                               encode(room.outline), room.height, room.capture, known)
                    planRooms.append((known, room))
                } else {
                    let id = UUID().uuidString.lowercased()
                    try db.run("INSERT INTO rooms (id, floor_id, name, outline, height, capture, position) VALUES (?, ?, ?, ?, ?, ?, ?)",
                               id, floor.id, room.name, encode(room.outline), room.height, room.capture, position)
                    position += 1
                    planRooms.append((id, room))
                }
            }
        case .newScan:
            let kept = Set(plan.compactMap(\.id))
            try Rooms.remove(db, existing.subtracting(kept))
            for (position, room) in plan.enumerated() {
                let id = room.id ?? UUID().uuidString.lowercased()
                try Rooms.upsert(db, id: id, floorId: floor.id, name: room.name, outline: encode(room.outline), height: room.height,
                                 capture: room.capture, position: position)
                planRooms.append((id, room))
            }
            // The old world map belongs to the old plan.
            if let old = try row.decodeIfPresent(1, as: String.self) {
                try StoredMap.clear(db, floorId: floor.id)
                try? FileManager.default.removeItem(atPath: old)
            }
        }
        try db.run("UPDATE floors SET plan_revision = plan_revision + 1, structure = coalesce(?, structure) WHERE id = ?", structure, floor.id)
        // The upload: the plan after whatever of its floor was queued last (the floor, the
        // previous plan, its world map: a continueScan needs that map on the server), then
        // the world map after the plan.
        let upload = PlanInput(planId: UUID().uuidString.lowercased(), mode: mode == .newScan ? .newScan : .continueScan,
                               rooms: planRooms.map { entry in
                                   RoomInput(id: entry.id, name: entry.room.name, outline: encode(entry.room.outline), height: entry.room.height,
                                             capture: entry.room.capture)
                               }, structure: structure)
        let planItem = try Queue.add(db, property: floor.propertyId, kind: .plan, entity: floor.id,
                                     dependsOn: try Queue.latest(db, kinds: [.floor, .plan, .worldmap], entity: floor.id),
                                     payload: String(decoding: upload.jsonBytes, as: UTF8.self))
        if let worldMap {
            try worldMap.record(db, floorId: floor.id)
            try Queue.add(db, property: floor.propertyId, kind: .worldmap, entity: floor.id, dependsOn: planItem, payload: worldMap.path)
        }
        return try Records.rooms(db, floorId: floor.id)
    }

    /// An outline as canonical JSON text.
    static func encode(_ outline: [[Double]]) -> String {
        var writer = JSONWriter()
        writer.array(outline) { writer, point in writer.array(point) { $0.double($1) } }
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// Rooms of the local plan, as plans and downloads change them.
enum Rooms {
    /// Removes rooms; nothing is lost: their panoramas stay on the floor (as the server does).
    static func remove(_ db: Database, _ ids: Set<String>) throws {
        for id in ids {
            try db.run("UPDATE panoramas SET room_id = NULL WHERE room_id = ?", id)
            try db.run("DELETE FROM rooms WHERE id = ?", id)
        }
    }

    static func upsert(_ db: Database, id: String, floorId: String, name: String?, outline: String, height: Double?, capture: String?, position: Int) throws {
        try db.run("""
            INSERT INTO rooms (id, floor_id, name, outline, height, capture, position) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, outline = excluded.outline, height = excluded.height,
                capture = excluded.capture, position = excluded.position
            """, id, floorId, name, outline, height, capture, position)
    }
}
