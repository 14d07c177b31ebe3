import NTAPIModel
import Foundation
import NTSQLiteDB

/// A stored property (docs/api.md "Property"); the metadata is stored as canonical JSON text.
typealias PropertyRecord = PropertyDocument

extension PropertyDocument {
    init(_ row: Row) {
        self.init(id: row["id"].string ?? "", tourId: row["tour_id"].string ?? "", name: row["name"].string ?? "",
                  floorCount: row["floor_count"].int ?? 0, metadata: row["metadata"].string ?? "{}",
                  createdAt: row["created_at"].string ?? "", updatedAt: row["updated_at"].string ?? "")
    }
}

/// A stored room (docs/api.md "Room"), its outline and capture output canonical JSON text.
typealias RoomRecord = RoomDocument

extension RoomDocument {
    init(_ row: Row) {
        self.init(id: row["id"].string ?? "", floorId: row["floor_id"].string ?? "", name: row["name"].string,
                  outline: row["outline"].string ?? "[]", height: row["height"].double, capture: row["capture"].string)
    }
}

/// A stored floor with its rooms (docs/api.md "Floor").
struct FloorRecord: Equatable {
    var id: String
    var propertyId: String
    var number: Int
    var name: String?
    var planRevision: Int
    var structure: String?
    var worldMapSHA256: String?
    var worldMapSize: Int64?
    /// The world map file's name (older maps: the floor id).
    var worldMapFile: String?
    var rooms: [RoomRecord]

    init(_ row: Row, rooms: [RoomRecord]) {
        id = row["id"].string ?? ""
        propertyId = row["property_id"].string ?? ""
        number = row["number"].int ?? 0
        name = row["name"].string
        planRevision = row["plan_revision"].int ?? 0
        structure = row["structure"].string
        worldMapSHA256 = row["world_map_sha256"].string
        worldMapSize = row["world_map_size"].int64
        worldMapFile = worldMapSHA256 == nil ? nil : row["world_map_file"].string ?? id
        self.rooms = rooms
    }

    /// The world map's file, when the floor has one.
    func worldMapKey(_ tenant: Int64) -> BlobKey? {
        worldMapFile.map { BlobKey(tenant: tenant, kind: .worldMap, id: $0) }
    }

    /// The world map as GET answers it, when the floor has one.
    var worldMap: StoredContent? {
        guard let worldMapSHA256, let worldMapSize else { return nil }
        return StoredContent(size: worldMapSize, sha256: worldMapSHA256, contentType: "application/octet-stream")
    }

    /// A plan can be continued only with the saved world map to relocalise into (seeds).
    var continuable: Bool { planRevision > 0 && worldMapSHA256 != nil }

    var document: FloorDocument {
        FloorDocument(id: id, propertyId: propertyId, number: number, name: name, planRevision: planRevision, continuable: continuable, rooms: rooms)
    }
}

/// A stored panorama (docs/api.md "Panorama").
typealias PanoramaRecord = PanoramaDocument

extension PanoramaDocument {
    init(_ row: Row) {
        self.init(id: row["id"].string ?? "", propertyId: row["property_id"].string ?? "", floorId: row["floor_id"].string ?? "",
                  roomId: row["room_id"].string, contentType: row["content_type"].string ?? "", size: row["size"].int64 ?? 0,
                  sha256: row["sha256"].string ?? "", createdAt: row["created_at"].string ?? "", position: PanoramaPosition(row))
    }
}

extension PanoramaPosition {
    /// From a row's `x`, `y` and `heading` (panoramas, uploads); they were stored only valid.
    init?(_ row: Row) {
        guard let x = row["x"].double, let y = row["y"].double, let position = try? PanoramaPosition(x: x, y: y, heading: row["heading"].double) else {
            return nil
        }
        self = position
    }
}
