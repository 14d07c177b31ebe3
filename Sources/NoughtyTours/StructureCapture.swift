import Foundation
import SQLiteDB

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

    public init(room: Room? = nil, name: String?, outline: [[Double]], height: Double? = nil) {
        self.room = room
        self.name = name
        self.outline = outline
        self.height = height
    }
}

/// Structure capture's confirm step, as a call: the floor's plan is applied locally at once
/// (rooms exist offline) and queued for upload with the floor's saved world map.
public struct StructureCapture: Sendable {
    let store: LocalStore

    /// Applies a captured plan to a floor; returns the floor's rooms afterwards.
    @discardableResult
    public func apply(floor: Floor, mode: StructureCaptureMode, rooms captured: [CapturedRoom],
                      worldMap: URL? = nil) async throws(NoughtyToursError) -> [Room] {
        for room in captured {
            guard room.outline.count >= 3, room.outline.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isFinite) }) else {
                throw .invalidInput("a room outline needs at least 3 points of [x, y]")
            }
            if let height = room.height, !(height > 0 && height < 100) { throw .invalidInput("a room height is between 0 and 100 metres") }
            if let existing = room.room, existing.floorId != floor.id { throw .invalidInput("room \(existing.id) is on another floor") }
        }
        let storedMap = try worldMap.map { url throws(NoughtyToursError) in try copyWorldMap(url, floor: floor) }
        do {
            return try await store.write { db in
                try Plans.apply(db, floor: floor, mode: mode, captured, worldMap: storedMap)
            }
        } catch {
            if let storedMap { try? FileManager.default.removeItem(atPath: storedMap) }
            throw error
        }
    }

    /// Saves the floor's world map on its own (replacing the one it had) and queues its upload
    /// after whatever of the floor was queued last. With a plan, the floor becomes continuable.
    public func saveWorldMap(_ url: URL, for floor: Floor) async throws(NoughtyToursError) {
        let stored = try copyWorldMap(url, floor: floor)
        do {
            let replaced = try await store.write { db -> String? in
                guard let row = try db.first("SELECT world_map_path FROM floors WHERE id = ?", floor.id) else { throw NoughtyToursError.notFound }
                try db.run("UPDATE floors SET world_map_path = ? WHERE id = ?", stored, floor.id)
                try Queue.add(db, property: floor.propertyId, kind: .worldmap, entity: floor.id,
                              dependsOn: try Queue.latest(db, kinds: [.floor, .plan, .worldmap], entity: floor.id), payload: stored)
                return row[0].string
            }
            // The old map's upload, if still queued, finds its file gone: nothing left to send.
            if let replaced { try? FileManager.default.removeItem(atPath: replaced) }
        } catch {
            try? FileManager.default.removeItem(atPath: stored)
            throw error
        }
    }

    /// Whether `.continueScan` may be used on the floor: it has a plan and a saved world map
    /// (the floors a property event would raise continueStructureCapture for).
    public func isContinuable(_ floor: Floor) async throws(NoughtyToursError) -> Bool {
        try await store.read { db in try Plans.isContinuable(db, floorId: floor.id) }
    }

    public func continuableFloors(of property: Property) async throws(NoughtyToursError) -> [Floor] {
        try await store.read { db in
            try Records.floors(db, propertyId: property.id).filter { try Plans.isContinuable(db, floorId: $0.id) }
        }
    }

    private func copyWorldMap(_ url: URL, floor: Floor) throws(NoughtyToursError) -> String {
        let target = store.directory.appendingPathComponent("worldmap-\(floor.id)-\(UUID().uuidString.lowercased())")
        do {
            try FileManager.default.copyItem(at: url, to: target)
        } catch {
            throw .invalidInput("the world map \(url.path) cannot be read")
        }
        return target.path
    }
}

/// Applying plans to the local database, with API.md's semantics.
enum Plans {
    static func isContinuable(_ db: Database, floorId: String) throws -> Bool {
        try db.first("SELECT 1 FROM floors WHERE id = ? AND plan_revision > 0 AND world_map_path IS NOT NULL", floorId) != nil
    }

    static func apply(_ db: Database, floor: Floor, mode: StructureCaptureMode, _ captured: [CapturedRoom], worldMap: String?) throws -> [Room] {
        guard let row = try db.first("SELECT plan_revision, world_map_path FROM floors WHERE id = ?", floor.id) else { throw NoughtyToursError.notFound }
        let existing = try Records.rooms(db, floorId: floor.id)
        var planRooms: [(id: String, room: CapturedRoom)] = []
        switch mode {
        case .continueScan:
            guard try isContinuable(db, floorId: floor.id) else { throw NoughtyToursError.notContinuable }
            var position = existing.count
            for room in captured {
                if let known = room.room, existing.contains(known) {
                    // Kept: id, name, panoramas. Updated: geometry.
                    try db.run("UPDATE rooms SET outline = ?, height = ? WHERE id = ?", try encode(room.outline), room.height, known.id)
                    planRooms.append((known.id, room))
                } else {
                    let id = UUID().uuidString.lowercased()
                    try db.run("INSERT INTO rooms (id, floor_id, name, outline, height, position) VALUES (?, ?, ?, ?, ?, ?)",
                               id, floor.id, room.name, try encode(room.outline), room.height, position)
                    position += 1
                    planRooms.append((id, room))
                }
            }
        case .newScan:
            let kept = Set(captured.compactMap { $0.room?.id })
            for room in existing where !kept.contains(room.id) {
                // Nothing is lost: a removed room's panoramas stay on the floor.
                try db.run("UPDATE panoramas SET room_id = NULL WHERE room_id = ?", room.id)
                try db.run("DELETE FROM rooms WHERE id = ?", room.id)
            }
            for (position, room) in captured.enumerated() {
                let id = room.room.flatMap { existing.contains($0) ? $0.id : nil } ?? UUID().uuidString.lowercased()
                try db.run("""
                    INSERT INTO rooms (id, floor_id, name, outline, height, position) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET name = excluded.name, outline = excluded.outline, height = excluded.height,
                        position = excluded.position
                    """, id, floor.id, room.name, try encode(room.outline), room.height, position)
                planRooms.append((id, room))
            }
            // The old world map belongs to the old plan.
            if let old = row[1].string {
                try db.run("UPDATE floors SET world_map_path = NULL WHERE id = ?", floor.id)
                try? FileManager.default.removeItem(atPath: old)
            }
        }
        try db.run("UPDATE floors SET plan_revision = plan_revision + 1 WHERE id = ?", floor.id)
        // The upload: the plan after whatever of its floor was queued last (the floor, the
        // previous plan, its world map: a continueScan needs that map on the server), then
        // the world map after the plan.
        let planId = UUID().uuidString.lowercased()
        let payload: [String: Any] = [
            "planId": planId, "mode": mode.rawValue,
            "rooms": planRooms.map { ["id": $0.id, "name": $0.room.name ?? NSNull(), "outline": $0.room.outline, "height": $0.room.height ?? NSNull()] as [String: Any] },
        ]
        let planItem = try Queue.add(db, property: floor.propertyId, kind: .plan, entity: floor.id,
                                     dependsOn: try Queue.latest(db, kinds: [.floor, .plan, .worldmap], entity: floor.id), payload: try encode(payload))
        if let worldMap {
            try db.run("UPDATE floors SET world_map_path = ? WHERE id = ?", worldMap, floor.id)
            try Queue.add(db, property: floor.propertyId, kind: .worldmap, entity: floor.id, dependsOn: planItem, payload: worldMap)
        }
        return try Records.rooms(db, floorId: floor.id)
    }

    static func encode(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }
}
