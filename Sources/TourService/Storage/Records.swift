import Foundation
import SQLiteDB

/// A stored property, and its JSON (API.md "Property").
struct PropertyRecord: Equatable, JSONEncodable {
    var id: String
    var tourId: String
    var name: String
    var floorCount: Int
    /// The metadata as stored: canonical JSON text (sorted keys, compact), written into
    /// answers as it is.
    var metadataJSON: String
    var createdAt: String
    var updatedAt: String

    init(_ row: Row) {
        id = row["id"].string ?? ""
        tourId = row["tour_id"].string ?? ""
        name = row["name"].string ?? ""
        floorCount = row["floor_count"].int ?? 0
        metadataJSON = row["metadata"].string ?? "{}"
        createdAt = row["created_at"].string ?? ""
        updatedAt = row["updated_at"].string ?? ""
    }

    /// Keys in sorted order, as `encodeJSON` writes objects: the same bytes either way.
    func appendJSON(to out: inout [UInt8]) {
        out.append(ascii: "{\"createdAt\":")
        out.append(jsonString: createdAt)
        out.append(ascii: ",\"floorCount\":")
        out.append(decimal: floorCount)
        out.append(ascii: ",\"id\":")
        out.append(jsonString: id)
        out.append(ascii: ",\"metadata\":")
        out.append(utf8: metadataJSON)
        out.append(ascii: ",\"name\":")
        out.append(jsonString: name)
        out.append(ascii: ",\"tourId\":")
        out.append(jsonString: tourId)
        out.append(ascii: ",\"updatedAt\":")
        out.append(jsonString: updatedAt)
        out.append(UInt8(ascii: "}"))
    }
}

/// A stored room (API.md "Room").
struct RoomRecord: Equatable {
    var id: String
    var floorId: String
    var name: String?
    var outline: String
    var height: Double?
    /// The opaque capture output, JSON text (in the tour document only).
    var capture: String?

    init(_ row: Row) {
        id = row["id"].string ?? ""
        floorId = row["floor_id"].string ?? ""
        name = row["name"].string
        outline = row["outline"].string ?? "[]"
        height = row["height"].double
        capture = row["capture"].string
    }

    var json: [String: Any] {
        ["id": id, "floorId": floorId, "name": name ?? NSNull(), "outline": decodeStoredJSON(outline), "height": height ?? NSNull()]
    }
}

/// A stored floor with its rooms (API.md "Floor").
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

    var json: [String: Any] {
        ["id": id, "propertyId": propertyId, "number": number, "name": name ?? NSNull(), "planRevision": planRevision,
         "continuable": continuable, "rooms": rooms.map(\.json)]
    }
}

/// A stored panorama (API.md "Panorama").
struct PanoramaRecord: Equatable {
    var id: String
    var propertyId: String
    var floorId: String
    var roomId: String?
    var contentType: String
    var size: Int64
    var sha256: String
    var createdAt: String

    init(_ row: Row) {
        id = row["id"].string ?? ""
        propertyId = row["property_id"].string ?? ""
        floorId = row["floor_id"].string ?? ""
        roomId = row["room_id"].string
        contentType = row["content_type"].string ?? ""
        size = row["size"].int64 ?? 0
        sha256 = row["sha256"].string ?? ""
        createdAt = row["created_at"].string ?? ""
    }

    var json: [String: Any] {
        ["id": id, "propertyId": propertyId, "floorId": floorId, "roomId": roomId ?? NSNull(), "contentType": contentType,
         "size": size, "sha256": sha256, "createdAt": createdAt]
    }
}
