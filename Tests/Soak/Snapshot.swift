import Foundation
import NTSQLiteDB

/// What a soak run holds, by kind, read from one source (the workers' ledgers, a client
/// database, the server's database), so that the three can be compared.
struct Snapshot {
    struct Floor: Equatable {
        var propertyId: String
        var planRevision = 0
        var rooms: [String] = []
        var worldMap: String?
    }

    struct Panorama: Equatable {
        var sha256: String
        var floorId: String
        var roomId: String?
    }

    var properties: Set<String> = []
    var floors: [String: Floor] = [:]
    var panoramas: [String: Panorama] = [:]

    init() {}

    /// The ledgers' JSON lines, in order: each plan line bumps its floor's revision.
    init(ledgers: [String]) throws {
        for path in ledgers {
            for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
                guard let entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let kind = entry["kind"] as? String else { continue }
                switch kind {
                case "property": properties.insert(entry["id"] as? String ?? "")
                case "floor": floors[entry["id"] as? String ?? ""] = Floor(propertyId: entry["propertyId"] as? String ?? "")
                case "plan":
                    let id = entry["floorId"] as? String ?? ""
                    floors[id]?.planRevision += 1
                    floors[id]?.rooms = entry["rooms"] as? [String] ?? []
                    if entry["mode"] as? String == "newScan" { floors[id]?.worldMap = nil } // its map follows it in the ledger
                case "worldmap": floors[entry["floorId"] as? String ?? ""]?.worldMap = entry["sha256"] as? String
                case "panorama":
                    panoramas[entry["id"] as? String ?? ""] = Panorama(sha256: entry["sha256"] as? String ?? "", floorId: entry["floorId"] as? String ?? "",
                                                                      roomId: entry["roomId"] as? String)
                default: break
                }
            }
        }
    }

    /// A database with the tables both sides share (properties, floors, rooms, panoramas).
    init(database db: Database, roomPosition: String, floorMap: String) throws {
        properties = Set(try db.query("SELECT id FROM properties").compactMap { try $0.decodeIfPresent(0, as: String.self) })
        for row in try db.query("SELECT id, property_id, plan_revision, \(floorMap) FROM floors") {
            let id = try row.decode(0, as: String.self)
            let rooms = try db.query("SELECT id FROM rooms WHERE floor_id = ? ORDER BY \(roomPosition)", id).compactMap { try $0.decodeIfPresent(0, as: String.self) }
            floors[id] = Floor(propertyId: try row.decode(1, as: String.self), planRevision: try row.decode(2, as: Int.self), rooms: rooms, worldMap: try row.decodeIfPresent(3, as: String.self))
        }
        for row in try db.query("SELECT id, sha256, floor_id, room_id FROM panoramas") {
            panoramas[try row.decode(0, as: String.self)] = Panorama(sha256: try row.decode(1, as: String.self), floorId: try row.decode(2, as: String.self), roomId: try row.decodeIfPresent(3, as: String.self))
        }
    }

    mutating func merge(_ other: Snapshot) {
        properties.formUnion(other.properties)
        floors.merge(other.floors) { first, _ in first }
        panoramas.merge(other.panoramas) { first, _ in first }
    }

    var summary: String {
        "\(properties.count) properties, \(floors.count) floors, \(floors.values.reduce(0) { $0 + $1.planRevision }) plans, "
            + "\(floors.values.filter { $0.worldMap != nil }.count) world maps, \(panoramas.count) panoramas"
    }

    /// Every way `other` is not this ledger, in words.
    func differences(_ other: Snapshot) -> [String] {
        var found: [String] = []
        for id in properties.symmetricDifference(other.properties) {
            found.append(properties.contains(id) ? "property \(id) missing" : "property \(id) not in the ledger")
        }
        for (id, floor) in floors where other.floors[id] != floor {
            found.append("floor \(id): ledger \(floor), found \(other.floors[id].map { "\($0)" } ?? "nothing")")
        }
        for id in other.floors.keys where floors[id] == nil { found.append("floor \(id) not in the ledger") }
        for (id, panorama) in panoramas where other.panoramas[id] != panorama {
            found.append("panorama \(id): ledger \(panorama), found \(other.panoramas[id].map { "\($0)" } ?? "nothing")")
        }
        for id in other.panoramas.keys where panoramas[id] == nil { found.append("panorama \(id) not in the ledger") }
        return found.sorted()
    }
}
