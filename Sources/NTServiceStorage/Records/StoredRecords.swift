import Foundation
import NTAPIModel
import NTServiceModel
import NTSQLiteDB

/// A stored property (docs/api.md "Property"); the metadata is stored as canonical JSON text.
package typealias PropertyRecord = PropertyDocument

extension PropertyDocument {
    package init(_ row: Row) throws(StorageError) {
        self.init(id: try row.decode("id", as: String.self), tourId: try row.decode("tour_id", as: String.self), name: try row.decode("name", as: String.self),
                  floorCount: try row.decode("floor_count", as: Int.self), metadata: try row.decode("metadata", as: String.self),
                  createdAt: try row.decode("created_at", as: String.self), updatedAt: try row.decode("updated_at", as: String.self))
    }
}

/// A stored room (docs/api.md "Room"), its outline and capture output canonical JSON text.
typealias RoomRecord = RoomDocument

extension RoomDocument {
    package init(_ row: Row) throws(StorageError) {
        self.init(id: try row.decode("id", as: String.self), floorId: try row.decode("floor_id", as: String.self), name: try row.decodeIfPresent("name", as: String.self),
                  outline: try row.decode("outline", as: String.self), height: try row.decodeIfPresent("height", as: Double.self), capture: try row.decodeIfPresent("capture", as: String.self))
    }
}

/// A stored floor with its rooms (docs/api.md "Floor").
package struct FloorRecord: Equatable {
    var id: String
    var propertyId: String
    var number: Int
    var name: String?
    var planRevision: Int
    var structure: String?
    /// When its plan was last applied (nil: before migration 0021 kept it).
    var planUpdatedAt: String?
    package var worldMapSHA256: String?
    var worldMapSize: Int64?
    /// The world map file's name (older maps: the floor id).
    var worldMapFile: String?
    var rooms: [RoomRecord]

    init(_ row: Row, rooms: [RoomRecord]) throws(StorageError) {
        id = try row.decode("id", as: String.self)
        propertyId = try row.decode("property_id", as: String.self)
        number = try row.decode("number", as: Int.self)
        name = try row.decodeIfPresent("name", as: String.self)
        planRevision = try row.decode("plan_revision", as: Int.self)
        structure = try row.decodeIfPresent("structure", as: String.self)
        planUpdatedAt = try row.decodeIfPresent("plan_updated_at", as: String.self)
        worldMapSHA256 = try row.decodeIfPresent("world_map_sha256", as: String.self)
        worldMapSize = try row.decodeIfPresent("world_map_size", as: Int64.self)
        worldMapFile = worldMapSHA256 == nil ? nil : try row.decodeIfPresent("world_map_file", as: String.self) ?? id
        self.rooms = rooms
    }

    /// The world map's file, when the floor has one.
    package func worldMapKey(_ tenant: Int64) -> BlobKey? {
        worldMapFile.map { BlobKey(tenant: tenant, kind: .worldMap, id: $0) }
    }

    /// The world map as GET answers it, when the floor has one.
    package var worldMap: StoredContent? {
        guard let worldMapSHA256, let worldMapSize else { return nil }
        return StoredContent(size: worldMapSize, sha256: worldMapSHA256, contentType: "application/octet-stream")
    }

    /// A plan can be continued only with the saved world map to relocalise into (seeds).
    var continuable: Bool { planRevision > 0 && worldMapSHA256 != nil }

    package var document: FloorDocument {
        FloorDocument(id: id, propertyId: propertyId, number: number, name: name, planRevision: planRevision, continuable: continuable, rooms: rooms)
    }
}

/// A stored panorama (docs/api.md "Panorama").
package typealias PanoramaRecord = PanoramaDocument

extension PanoramaDocument {
    package init(_ row: Row) throws(StorageError) {
        self.init(id: try row.decode("id", as: String.self), propertyId: try row.decode("property_id", as: String.self), floorId: try row.decode("floor_id", as: String.self),
                  roomId: try row.decodeIfPresent("room_id", as: String.self), contentType: try row.decode("content_type", as: String.self), size: try row.decode("size", as: Int64.self),
                  sha256: try row.decode("sha256", as: String.self), createdAt: try row.decode("created_at", as: String.self), position: try PanoramaPosition(row),
                  state: PanoramaState(rawValue: try row.decode("state", as: String.self)) ?? .processing,
                  unreadableReason: try row.decodeIfPresent("unreadable_reason", as: String.self),
                  fileGeometry: try row.decodeIfPresent("geometry", as: String.self).map { text throws(StorageError) in
                      do { return try PanoramaFileGeometry(JSONReader.parse(text)) } catch { throw StorageError(.corrupt, "a panorama's geometry is not its JSON: \(error)") }
                  },
                  capturedAt: try row.decodeIfPresent("captured_at", as: String.self), order: try row.decodeIfPresent("walk_order", as: Int.self))
    }
}

extension PanoramaPosition {
    /// From a row's `x`, `y`, `heading` and `camera_height` (panoramas, uploads); they were stored only valid.
    package init?(_ row: Row) throws(StorageError) {
        let heading = try row.decodeIfPresent("heading", as: Double.self), height = try row.decodeIfPresent("camera_height", as: Double.self)
        guard let x = try row.decodeIfPresent("x", as: Double.self), let y = try row.decodeIfPresent("y", as: Double.self),
              let position = try? PanoramaPosition(x: x, y: y, heading: heading, height: height) else {
            return nil
        }
        self = position
    }
}

/// A stored file as its row describes it: its size, its digest and its media type.
package struct StoredContent: Sendable {
    package var size: Int64
    /// Lowercase hex.
    package var sha256: String
    package var contentType: String

    package init(size: Int64, sha256: String, contentType: String) {
        self.size = size
        self.sha256 = sha256
        self.contentType = contentType
    }
}
