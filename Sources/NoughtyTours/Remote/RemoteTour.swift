import Foundation

/// A property as the server lists it (`PropertyManagement.remoteProperties()`).
public struct RemoteProperty: Sendable, Equatable, Hashable {
    public let id: String
    public let name: String
    public let tourId: UUID
    public let floorCount: Int
    public let updatedAt: Date
}

/// The server's tour document, read into what local storage keeps (API.md `GET
/// /v1/tours/{tourId}`). Pure: parsing throws `transport` for a document that is not the
/// contract's, since the server broke it, not the host.
struct RemoteTour: Sendable {
    struct Floor: Sendable {
        var id: String
        var number: Int
        var name: String?
        var planRevision: Int
        /// JSON text, as it is stored locally.
        var structure: String?
        var rooms: [Room]
        var worldMap: WorldMap?
        var panoramas: [Panorama]
    }

    struct Room: Sendable {
        var id: String
        var name: String?
        var outline: String
        var height: Double?
        var capture: String?
    }

    struct WorldMap: Sendable, Equatable {
        var sha256: String
        var size: Int64
        var path: String
    }

    struct Panorama: Sendable {
        var id: String
        var floorId: String
        var roomId: String?
        var contentType: String
        var size: Int64
        var sha256: String
        var createdAt: String
    }

    var property: RemoteProperty
    var metadata: [String: String]
    var createdAt: String
    var floors: [Floor]

    static func parse(_ json: [String: Any]) throws(NoughtyToursError) -> RemoteTour {
        let reader = Reader(context: "the tour document")
        let propertyJSON = try reader.object(json["property"], "property")
        let property = try RemoteProperty.parse(propertyJSON)
        var floors: [Floor] = []
        for value in try reader.array(json["floors"], "floors") {
            let floor = try reader.object(value, "a floor")
            let plan = floor["plan"] as? [String: Any]
            let structure = try reader.jsonText(plan?["structure"])
            let map = floor["worldMap"] as? [String: Any]
            floors.append(Floor(
                id: try reader.id(floor["id"], "floor id"),
                number: try reader.int(floor["number"], "floor number"),
                name: floor["name"] as? String,
                planRevision: plan.flatMap { $0["revision"] as? Int } ?? 0,
                structure: structure,
                rooms: try reader.array(floor["rooms"], "rooms").map { value throws(NoughtyToursError) in
                    let room = try reader.object(value, "a room")
                    return Room(id: try reader.id(room["id"], "room id"), name: room["name"] as? String,
                                outline: try reader.jsonText(room["outline"]) ?? "[]", height: room["height"] as? Double,
                                capture: try reader.jsonText(room["capture"]))
                },
                worldMap: try map.map { map throws(NoughtyToursError) in
                    WorldMap(sha256: try reader.string(map["sha256"], "worldMap sha256"), size: try reader.int64(map["size"], "worldMap size"),
                             path: try reader.string(map["url"], "worldMap url"))
                },
                panoramas: try reader.array(floor["panoramas"], "panoramas").map { value throws(NoughtyToursError) in
                    let panorama = try reader.object(value, "a panorama")
                    return Panorama(id: try reader.id(panorama["id"], "panorama id"), floorId: try reader.id(panorama["floorId"], "panorama floorId"),
                                    roomId: panorama["roomId"] as? String, contentType: try reader.string(panorama["contentType"], "contentType"),
                                    size: try reader.int64(panorama["size"], "panorama size"), sha256: try reader.string(panorama["sha256"], "sha256"),
                                    createdAt: panorama["createdAt"] as? String ?? "")
                }))
        }
        return RemoteTour(property: property, metadata: propertyJSON["metadata"] as? [String: String] ?? [:],
                          createdAt: propertyJSON["createdAt"] as? String ?? "", floors: floors)
    }
}

extension RemoteProperty {
    /// API.md's Property.
    static func parse(_ json: [String: Any]) throws(NoughtyToursError) -> RemoteProperty {
        let reader = Reader(context: "a property")
        guard let tourId = (json["tourId"] as? String).flatMap(UUID.init(uuidString:)) else { throw reader.broken("tourId") }
        guard let updatedAt = (json["updatedAt"] as? String).flatMap(RFC3339.date) else { throw reader.broken("updatedAt") }
        return RemoteProperty(id: try reader.id(json["id"], "id"), name: try reader.string(json["name"], "name"), tourId: tourId,
                              floorCount: try reader.int(json["floorCount"], "floorCount"), updatedAt: updatedAt)
    }
}

/// RFC 3339 times as the server writes them (with or without fractional seconds).
enum RFC3339 {
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

/// Typed reads of the server's JSON, each naming what was wrong.
private struct Reader {
    let context: String

    func broken(_ what: String) -> NoughtyToursError {
        .transport("the server sent \(context) without a valid \(what)")
    }

    func object(_ value: Any?, _ what: String) throws(NoughtyToursError) -> [String: Any] {
        guard let object = value as? [String: Any] else { throw broken(what) }
        return object
    }

    func array(_ value: Any?, _ what: String) throws(NoughtyToursError) -> [Any] {
        guard let array = value as? [Any] else { throw broken(what) }
        return array
    }

    func string(_ value: Any?, _ what: String) throws(NoughtyToursError) -> String {
        guard let string = value as? String else { throw broken(what) }
        return string
    }

    /// An id as the API writes them: a lowercase UUID.
    func id(_ value: Any?, _ what: String) throws(NoughtyToursError) -> String {
        guard let text = value as? String, let uuid = UUID(uuidString: text) else { throw broken(what) }
        return uuid.uuidString.lowercased()
    }

    func int(_ value: Any?, _ what: String) throws(NoughtyToursError) -> Int {
        guard let number = value as? Int else { throw broken(what) }
        return number
    }

    func int64(_ value: Any?, _ what: String) throws(NoughtyToursError) -> Int64 {
        guard let number = value as? Int else { throw broken(what) }
        return Int64(number)
    }

    /// A JSON value as text (sorted keys), nil for null or absent.
    func jsonText(_ value: Any?) throws(NoughtyToursError) -> String? {
        guard let value, !(value is NSNull) else { return nil }
        do {
            return try Plans.encode(value)
        } catch {
            throw broken("JSON value")
        }
    }
}
