import Foundation
@testable import NoughtyTours

/// What a tour holds, in a form both the local store and the server's tour document give:
/// equal exactly when the server has what was captured.
struct TourContent: Equatable, CustomStringConvertible {
    struct RoomContent: Equatable {
        var id: String
        var name: String?
        var outline: [[Double]]
        var height: Double?
    }
    struct PanoramaContent: Equatable {
        var id: String
        var roomId: String?
        var size: Int
        var sha256: String
    }
    struct FloorContent: Equatable {
        var id: String
        var number: Int
        var name: String?
        var rooms: [RoomContent]
        var panoramas: [PanoramaContent]
    }

    var name: String
    var floorCount: Int
    var metadata: [String: String]
    var floors: [FloorContent]

    var description: String { "\(name) \(floorCount) \(metadata) \(floors)" }

    /// From the library's local database.
    static func local(_ tours: NoughtyTours, _ property: Property) async throws -> TourContent {
        try await tours.store.read { db in
            let row = try db.first("SELECT name, floor_count, metadata FROM properties WHERE id = ?", property.id)
            let metadata = (try JSONSerialization.jsonObject(with: Data((row?.decodeIfPresent(2, as: String.self) ?? "{}").utf8))) as? [String: String] ?? [:]
            let floors = try db.query("SELECT id, number, name FROM floors WHERE property_id = ? ORDER BY number, id", property.id).map { floor in
                let id = try floor.decode(0, as: String.self)
                let rooms = try db.query("SELECT id, name, outline, height FROM rooms WHERE floor_id = ? ORDER BY id", id).map {
                    RoomContent(id: try $0.decode(0, as: String.self), name: try $0.decodeIfPresent(1, as: String.self),
                                outline: (try JSONSerialization.jsonObject(with: Data((try $0.decode(2, as: String.self)).utf8))) as? [[Double]] ?? [],
                                height: try $0.decodeIfPresent(3, as: Double.self))
                }
                let panoramas = try db.query("SELECT id, room_id, size, sha256 FROM panoramas WHERE floor_id = ? ORDER BY id", id).map {
                    PanoramaContent(id: try $0.decode(0, as: String.self), roomId: try $0.decodeIfPresent(1, as: String.self), size: try $0.decode(2, as: Int.self), sha256: try $0.decode(3, as: String.self))
                }
                return FloorContent(id: id, number: try floor.decode(1, as: Int.self), name: try floor.decodeIfPresent(2, as: String.self), rooms: rooms, panoramas: panoramas)
            }
            return TourContent(name: try row?.decode(0, as: String.self) ?? "", floorCount: try row?.decode(1, as: Int.self) ?? 0, metadata: metadata, floors: floors)
        }
    }

    /// From the server's `GET /v1/tours/{tourId}`.
    static func server(_ tour: [String: Any]) -> TourContent {
        let property = tour["property"] as? [String: Any] ?? [:]
        let floors = (tour["floors"] as? [[String: Any]] ?? []).map { floor in
            FloorContent(
                id: floor["id"] as? String ?? "", number: floor["number"] as? Int ?? -1, name: floor["name"] as? String,
                rooms: (floor["rooms"] as? [[String: Any]] ?? []).map {
                    RoomContent(id: $0["id"] as? String ?? "", name: $0["name"] as? String,
                                outline: ($0["outline"] as? [[Any]] ?? []).map { $0.compactMap { ($0 as? NSNumber)?.doubleValue } },
                                height: ($0["height"] as? NSNumber)?.doubleValue)
                }.sorted { $0.id < $1.id },
                panoramas: (floor["panoramas"] as? [[String: Any]] ?? []).map {
                    PanoramaContent(id: $0["id"] as? String ?? "", roomId: $0["roomId"] as? String, size: $0["size"] as? Int ?? -1,
                                    sha256: $0["sha256"] as? String ?? "")
                }.sorted { $0.id < $1.id })
        }.sorted { ($0.number, $0.id) < ($1.number, $1.id) }
        return TourContent(name: property["name"] as? String ?? "", floorCount: property["floorCount"] as? Int ?? -1,
                           metadata: property["metadata"] as? [String: String] ?? [:], floors: floors)
    }
}
