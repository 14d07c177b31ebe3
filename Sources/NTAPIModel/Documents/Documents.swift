/// The API's answers (docs/api.md), as types: the server writes them, the client reads them.
/// Each writes its keys in sorted order, so one state is always the same bytes; stored JSON
/// (metadata, outlines, capture output, structure) is held as canonical text and spliced.

/// docs/api.md "Property".
public struct PropertyDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var tourId: String
    public var name: String
    public var floorCount: Int
    /// Canonical JSON text of a string-to-string object.
    public var metadata: String
    public var createdAt: String
    public var updatedAt: String

    public init(id: String, tourId: String, name: String, floorCount: Int, metadata: String, createdAt: String, updatedAt: String) {
        self.id = id
        self.tourId = tourId
        self.name = name
        self.floorCount = floorCount
        self.metadata = metadata
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "property")
        _ = try json.strings("metadata")
        self.init(id: try json.string("id"), tourId: try json.string("tourId"), name: try json.string("name"),
                  floorCount: try json.integer("floorCount"), metadata: json.canonical("metadata") ?? "{}",
                  createdAt: try json.string("createdAt"), updatedAt: try json.string("updatedAt"))
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("createdAt"); writer.string(createdAt)
            writer.key("floorCount"); writer.int(floorCount)
            writer.key("id"); writer.string(id)
            writer.key("metadata"); writer.raw(metadata)
            writer.key("name"); writer.string(name)
            writer.key("tourId"); writer.string(tourId)
            writer.key("updatedAt"); writer.string(updatedAt)
        }
    }
}

/// `GET /v1/properties`: a page of properties and the cursor of the next.
public struct PropertyPage: JSONDocument, Equatable, Sendable {
    public var items: [PropertyDocument]
    public var next: String?

    public init(items: [PropertyDocument], next: String?) {
        self.items = items
        self.next = next
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "property page")
        var items: [PropertyDocument] = []
        for item in try json.array("items") { items.append(try PropertyDocument(item)) }
        self.init(items: items, next: try json.optionalString("next"))
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("items"); writer.array(items) { $1.write(to: &$0) }
            writer.key("next"); writer.string(next)
        }
    }
}

/// docs/api.md "Room"; the tour document adds each room's capture output.
public struct RoomDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var floorId: String
    public var name: String?
    /// Canonical JSON text: [[x, y], …].
    public var outline: String
    public var height: Double?
    /// Canonical JSON text, written only in the tour document.
    public var capture: String?

    public init(id: String, floorId: String, name: String?, outline: String, height: Double?, capture: String?) {
        self.id = id
        self.floorId = floorId
        self.name = name
        self.outline = outline
        self.height = height
        self.capture = capture
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "room")
        _ = try json.array("outline")
        self.init(id: try json.string("id"), floorId: try json.string("floorId"), name: try json.optionalString("name"),
                  outline: json.canonical("outline") ?? "[]", height: try json.optionalNumber("height"), capture: json.canonical("capture"))
    }

    public func write(to writer: inout JSONWriter) {
        write(to: &writer, withCapture: false)
    }

    public func write(to writer: inout JSONWriter, withCapture: Bool) {
        writer.object { writer in
            if withCapture { writer.key("capture"); writer.raw(capture) }
            writer.key("floorId"); writer.string(floorId)
            writer.key("height"); writer.double(height)
            writer.key("id"); writer.string(id)
            writer.key("name"); writer.string(name)
            writer.key("outline"); writer.raw(outline)
        }
    }
}

/// docs/api.md "Floor", with its rooms.
public struct FloorDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var propertyId: String
    public var number: Int
    public var name: String?
    public var planRevision: Int
    public var continuable: Bool
    public var rooms: [RoomDocument]

    public init(id: String, propertyId: String, number: Int, name: String?, planRevision: Int, continuable: Bool, rooms: [RoomDocument]) {
        self.id = id
        self.propertyId = propertyId
        self.number = number
        self.name = name
        self.planRevision = planRevision
        self.continuable = continuable
        self.rooms = rooms
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "floor")
        var rooms: [RoomDocument] = []
        for room in try json.array("rooms") { rooms.append(try RoomDocument(room)) }
        self.init(id: try json.string("id"), propertyId: try json.string("propertyId"), number: try json.integer("number"),
                  name: try json.optionalString("name"), planRevision: try json.integer("planRevision"), continuable: try json.bool("continuable"),
                  rooms: rooms)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in writeMembers(to: &writer) }
    }

    /// The members from `continuable` to `rooms`, for documents that add their own around them.
    func writeMembers(to writer: inout JSONWriter, withCapture: Bool = false, between: (inout JSONWriter) -> Void = { _ in }) {
        writer.key("continuable"); writer.bool(continuable)
        writer.key("id"); writer.string(id)
        writer.key("name"); writer.string(name)
        writer.key("number"); writer.int(number)
        between(&writer)
        writer.key("planRevision"); writer.int(planRevision)
        writer.key("propertyId"); writer.string(propertyId)
        writer.key("rooms"); writer.array(rooms) { $1.write(to: &$0, withCapture: withCapture) }
    }
}

/// What became of a stored panorama: its previews (and tiles) being made, made, or not made
/// because its image cannot be read (docs/api.md "Panorama").
public enum PanoramaState: String, Sendable, Equatable {
    case processing, ready, unreadable
}

/// docs/api.md "Panorama"; in the tour document with its content URL.
public struct PanoramaDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var propertyId: String
    public var floorId: String
    public var roomId: String?
    public var contentType: String
    public var size: Int64
    /// Lowercase hex.
    public var sha256: String
    public var createdAt: String
    /// Where on the plan it was taken, when the capture said.
    public var position: PanoramaPosition?
    public var state: PanoramaState
    /// Why it is `unreadable`.
    public var unreadableReason: String?
    /// What its file said of how it is drawn; nil until it is processed (and for panoramas
    /// processed before this was read).
    public var fileGeometry: PanoramaFileGeometry?
    /// When its file says it was taken (EXIF's DateTimeOriginal, the camera's local time as
    /// `YYYY-MM-DDTHH:MM:SS`); nil until it is processed, or when the file does not say.
    public var capturedAt: String?
    /// Its place in its room's walk as the tenant set it (`PUT /v1/floors/{floorId}/panorama-order`);
    /// nil: by `capturedAt`, else `createdAt`, after those with one.
    public var order: Int?

    public init(id: String, propertyId: String, floorId: String, roomId: String?, contentType: String, size: Int64, sha256: String, createdAt: String,
                position: PanoramaPosition? = nil, state: PanoramaState = .ready, unreadableReason: String? = nil, fileGeometry: PanoramaFileGeometry? = nil,
                capturedAt: String? = nil, order: Int? = nil) {
        self.id = id
        self.propertyId = propertyId
        self.floorId = floorId
        self.roomId = roomId
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.createdAt = createdAt
        self.position = position
        self.state = state
        self.unreadableReason = unreadableReason
        self.fileGeometry = fileGeometry
        self.capturedAt = capturedAt
        self.order = order
    }

    /// Where it comes in its room's walk: the tenant's order first, then as captured, then as
    /// uploaded (a camera's local time and the server's UTC compared as written: close enough
    /// for one room's captures, which come from one device).
    public static func walkOrder(_ a: PanoramaDocument, _ b: PanoramaDocument) -> Bool {
        let (ka, kb) = ((a.order ?? Int.max, a.capturedAt ?? a.createdAt, a.createdAt, a.id), (b.order ?? Int.max, b.capturedAt ?? b.createdAt, b.createdAt, b.id))
        return ka < kb
    }

    /// The compass heading of its image's centre: the upload's, else its file's.
    public var heading: Double? { position?.heading ?? fileGeometry?.heading }

    /// A server before states had none: its panoramas read as ready.
    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "panorama")
        let state = try json.optionalString("state").map { text throws(InvalidDocument) in
            guard let state = PanoramaState(rawValue: text) else { throw InvalidDocument("a panorama's state is processing, ready or unreadable") }
            return state
        }
        self.init(id: try json.string("id"), propertyId: try json.string("propertyId"), floorId: try json.string("floorId"),
                  roomId: try json.optionalString("roomId"), contentType: try json.string("contentType"), size: Int64(try json.integer("size")),
                  sha256: try json.string("sha256"), createdAt: try json.string("createdAt"), position: try PanoramaPosition(json["position"]),
                  state: state ?? .ready, unreadableReason: try json.optionalString("unreadableReason"),
                  fileGeometry: try json["geometry"].flatMap { value throws(InvalidDocument) in value.isNull ? nil : try PanoramaFileGeometry(document: value) },
                  capturedAt: try json.optionalString("capturedAt"), order: try json.optionalNumber("order").map { Int($0) })
    }

    public var contentURL: String { "/v1/panoramas/\(id)/content" }

    public func write(to writer: inout JSONWriter) {
        write(to: &writer, withContentURL: false)
    }

    public func write(to writer: inout JSONWriter, withContentURL: Bool) {
        writer.object { writer in
            writer.key("capturedAt"); writer.string(capturedAt)
            writer.key("contentType"); writer.string(contentType)
            if withContentURL { writer.key("contentUrl"); writer.string(contentURL) }
            writer.key("createdAt"); writer.string(createdAt)
            writer.key("floorId"); writer.string(floorId)
            writer.key("geometry")
            if let fileGeometry { fileGeometry.write(to: &writer, uploadHeading: position?.heading) } else { writer.null() }
            writer.key("id"); writer.string(id)
            writer.key("order")
            if let order { writer.int(order) } else { writer.null() }
            writer.key("position")
            if let position { position.write(to: &writer) } else { writer.null() }
            writer.key("propertyId"); writer.string(propertyId)
            writer.key("roomId"); writer.string(roomId)
            writer.key("sha256"); writer.string(sha256)
            writer.key("size"); writer.int(size)
            writer.key("state"); writer.string(state.rawValue)
            writer.key("unreadableReason"); writer.string(unreadableReason)
        }
    }
}

/// A floor's panoramas in walk order: `{"items": [Panorama…]}` (PUT /v1/floors/{floorId}/panorama-order).
public struct PanoramaListDocument: JSONDocument, Equatable, Sendable {
    public var items: [PanoramaDocument]

    public init(items: [PanoramaDocument]) {
        self.items = items
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "panorama list")
        var items: [PanoramaDocument] = []
        for item in try json.array("items") { items.append(try PanoramaDocument(item)) }
        self.init(items: items)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in writer.key("items"); writer.array(items) { $1.write(to: &$0) } }
    }
}

/// docs/api.md "ServerStatus": what the server holds for a property.
public struct ServerStatusDocument: JSONDocument, Equatable, Sendable {
    public var propertyId: String
    public var tourId: String
    public var floorCount: Int
    public var roomCount: Int
    public var panoramaCount: Int
    public var panoramaBytes: Int64
    public var updatedAt: String

    public init(propertyId: String, tourId: String, floorCount: Int, roomCount: Int, panoramaCount: Int, panoramaBytes: Int64, updatedAt: String) {
        self.propertyId = propertyId
        self.tourId = tourId
        self.floorCount = floorCount
        self.roomCount = roomCount
        self.panoramaCount = panoramaCount
        self.panoramaBytes = panoramaBytes
        self.updatedAt = updatedAt
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("floorCount"); writer.int(floorCount)
            writer.key("panoramaBytes"); writer.int(panoramaBytes)
            writer.key("panoramaCount"); writer.int(panoramaCount)
            writer.key("propertyId"); writer.string(propertyId)
            writer.key("roomCount"); writer.int(roomCount)
            writer.key("tourId"); writer.string(tourId)
            writer.key("updatedAt"); writer.string(updatedAt)
        }
    }
}

/// `GET /v1/tours/{tourId}`: the property, its floors with plan, rooms (with capture output),
/// world map and panoramas.
public struct TourDocument: JSONDocument, Equatable, Sendable {
    public struct Plan: Equatable, Sendable {
        public var revision: Int
        /// Canonical JSON text.
        public var structure: String?
        /// When it was last applied (null: before the server kept it).
        public var updatedAt: String?

        public init(revision: Int, structure: String?, updatedAt: String? = nil) {
            self.revision = revision
            self.structure = structure
            self.updatedAt = updatedAt
        }
    }

    public struct WorldMap: Equatable, Sendable {
        public var sha256: String
        public var size: Int64
        public var url: String

        public init(sha256: String, size: Int64, url: String) {
            self.sha256 = sha256
            self.size = size
            self.url = url
        }
    }

    public struct Floor: Equatable, Sendable {
        public var floor: FloorDocument
        public var plan: Plan?
        public var worldMap: WorldMap?
        public var panoramas: [PanoramaDocument]

        public init(floor: FloorDocument, plan: Plan?, worldMap: WorldMap?, panoramas: [PanoramaDocument]) {
            self.floor = floor
            self.plan = plan
            self.worldMap = worldMap
            self.panoramas = panoramas
        }
    }

    public var tourId: String
    public var property: PropertyDocument
    public var floors: [Floor]

    public init(tourId: String, property: PropertyDocument, floors: [Floor]) {
        self.tourId = tourId
        self.property = property
        self.floors = floors
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "tour document")
        var floors: [Floor] = []
        for value in try json.array("floors") {
            let floor = try Fields(value, context: "tour floor")
            let plan = try floor.object("plan").map { plan throws(InvalidDocument) in
                Plan(revision: try plan.integer("revision"), structure: plan.canonical("structure"), updatedAt: try plan.optionalString("updatedAt"))
            }
            let map = try floor.object("worldMap").map { map throws(InvalidDocument) in
                WorldMap(sha256: try map.string("sha256"), size: Int64(try map.integer("size")), url: try map.string("url"))
            }
            var panoramas: [PanoramaDocument] = []
            for panorama in try floor.array("panoramas") { panoramas.append(try PanoramaDocument(panorama)) }
            floors.append(Floor(floor: try FloorDocument(value), plan: plan, worldMap: map, panoramas: panoramas))
        }
        guard let property = json["property"] else { throw InvalidDocument("missing field property") }
        self.init(tourId: try json.string("tourId"), property: try PropertyDocument(property), floors: floors)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("floors")
            writer.array(floors) { writer, floor in
                writer.object { writer in
                    floor.floor.writeMembers(to: &writer, withCapture: true) { writer in
                        writer.key("panoramas"); writer.array(floor.panoramas) { $1.write(to: &$0, withContentURL: true) }
                        writer.key("plan")
                        if let plan = floor.plan {
                            writer.object { writer in
                                writer.key("revision"); writer.int(plan.revision)
                                writer.key("structure"); writer.raw(plan.structure)
                                writer.key("updatedAt"); writer.string(plan.updatedAt)
                            }
                        } else {
                            writer.null()
                        }
                    }
                    writer.key("worldMap")
                    if let map = floor.worldMap {
                        writer.object { writer in
                            writer.key("sha256"); writer.string(map.sha256)
                            writer.key("size"); writer.int(map.size)
                            writer.key("url"); writer.string(map.url)
                        }
                    } else {
                        writer.null()
                    }
                }
            }
            writer.key("property"); property.write(to: &writer)
            writer.key("tourId"); writer.string(tourId)
        }
    }
}

/// docs/api.md's error body: `{"error": {"code", "message", "retryable"}}`.
public struct ErrorDocument: Equatable, Sendable {
    public var code: String
    public var message: String

    public init(_ value: JSONValue) throws(InvalidDocument) {
        guard let error = value["error"] else { throw InvalidDocument("missing field error") }
        let json = try Fields(error, context: "error")
        code = try json.string("code")
        message = try json.string("message")
    }
}

/// How the SDK's screens title a floor without a name of its own: "Ground floor" for number 0,
/// "Floor N" otherwise. The client's handles and toursd's pages both title floors so.
public enum FloorTitle {
    public static func of(number: Int) -> String {
        number == 0 ? "Ground floor" : "Floor \(number)"
    }

    public static func of(number: Int, name: String?) -> String {
        name ?? of(number: number)
    }
}

/// A property as the list shows it: the property and what it holds.
public struct PropertySummary: Sendable, Equatable {
    public var property: PropertyDocument
    public var floors: Int
    public var rooms: Int
    public var panoramas: Int

    public init(property: PropertyDocument, floors: Int, rooms: Int, panoramas: Int) {
        self.property = property
        self.floors = floors
        self.rooms = rooms
        self.panoramas = panoramas
    }
}
