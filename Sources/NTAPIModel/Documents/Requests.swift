/// A name people read (a property's, a floor's, a room's): 1–200 characters after trimming,
/// at most 800 UTF-8 bytes (one character can be a letter with any number of combining marks
/// after it), and no control character (a NUL had cut what was stored).
public enum DisplayName {
    public static let maxCharacters = 200
    public static let maxBytes = 800

    public static func validated(_ text: String, _ field: String) throws(InvalidDocument) -> String {
        let name = trimmed(text)
        guard (1...maxCharacters).contains(name.count) else { throw InvalidDocument("\(field) must be 1 to \(maxCharacters) characters after trimming") }
        guard name.utf8.count <= maxBytes else { throw InvalidDocument("\(field) is longer than \(maxBytes) bytes in UTF-8") }
        guard !hasControlCharacters(name) else { throw InvalidDocument("\(field) must not contain control characters") }
        return name
    }

    /// Without leading and trailing white space (Unicode's White_Space).
    public static func trimmed(_ text: String) -> String {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }), let last = text.lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(text[first...last])
    }

    public static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

/// The body of PUT /v1/properties/{id}.
public struct PropertyInput: Equatable, Sendable, JSONDocument {
    public var name: String
    public var floorCount: Int
    public var metadata: [String: String]

    public static let maxMetadataKeys = 64
    public static let maxMetadataKeyBytes = 128
    public static let maxMetadataValueBytes = 4096
    /// All keys and values together. A listing of 200 properties stays a few MB.
    public static let maxMetadataBytes = 16 * 1024

    public init(name: String, floorCount: Int, metadata: [String: String]) {
        self.name = name
        self.floorCount = floorCount
        self.metadata = metadata
    }

    /// Parses and checks docs/api.md's rules: name a DisplayName, floorCount 1–200, metadata string
    /// to string with at most 64 keys, each key 1–128 UTF-8 bytes without control characters,
    /// each value at most 4096 bytes.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> PropertyInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        let input = PropertyInput(name: try json.string("name"), floorCount: try json.integer("floorCount"),
                                  metadata: try json.strings("metadata") ?? [:])
        return try input.validated()
    }

    /// The same input with its name trimmed, or the first rule it breaks.
    public func validated() throws(InvalidDocument) -> PropertyInput {
        let name = try DisplayName.validated(self.name, "name")
        guard (1...200).contains(floorCount) else { throw InvalidDocument("floorCount must be 1 to 200") }
        guard metadata.count <= Self.maxMetadataKeys else { throw InvalidDocument("metadata has more than \(Self.maxMetadataKeys) keys") }
        for (key, value) in metadata {
            guard (1...Self.maxMetadataKeyBytes).contains(key.utf8.count), !DisplayName.hasControlCharacters(key) else {
                throw InvalidDocument("a metadata key is 1 to \(Self.maxMetadataKeyBytes) bytes in UTF-8, without control characters")
            }
            guard value.utf8.count <= Self.maxMetadataValueBytes else { throw InvalidDocument("metadata.\(key) is longer than \(Self.maxMetadataValueBytes) bytes") }
        }
        guard metadata.reduce(0, { $0 + $1.key.utf8.count + $1.value.utf8.count }) <= Self.maxMetadataBytes else {
            throw InvalidDocument("metadata is larger than \(Self.maxMetadataBytes) bytes in all")
        }
        return PropertyInput(name: name, floorCount: floorCount, metadata: metadata)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("floorCount"); writer.int(floorCount)
            writer.key("metadata"); writer.object(metadata)
            writer.key("name"); writer.string(name)
        }
    }
}

/// The body of PUT /v1/properties/{pid}/floors/{fid}.
public struct FloorInput: Equatable, Sendable, JSONDocument {
    public var number: Int
    public var name: String?

    public init(number: Int, name: String?) {
        self.number = number
        self.name = name
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> FloorInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        let number = try json.integer("number")
        guard (-10...500).contains(number) else { throw InvalidDocument("number must be -10 to 500") }
        let name = try json.optionalString("name").map { text throws(InvalidDocument) in try DisplayName.validated(text, "name") }
        return FloorInput(number: number, name: name)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("name"); writer.string(name)
            writer.key("number"); writer.int(number)
        }
    }
}

/// The body of PUT /v1/floors/{floorId}/panorama-order: `{"panoramaIds": [ID, …]}`, the order a
/// tour's walk takes those panoramas of the floor in, each room's in the order listed; the
/// floor's panoramas it does not list follow, as captured. Each id once.
public struct PanoramaOrderInput: Equatable, Sendable, JSONDocument {
    public var panoramaIds: [String]

    /// Ids one order lists at most.
    public static let maxIds = 10_000

    public init(panoramaIds: [String]) {
        self.panoramaIds = panoramaIds
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> PanoramaOrderInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        guard let items = json["panoramaIds"]?.array else {
            throw InvalidDocument("panoramaIds must be an array of at most \(maxIds) panorama ids")
        }
        return try PanoramaOrderInput(validating: items.map { $0.string ?? "" })
    }

    /// An order of `ids` as the server takes it (the client checks it the same way): at most
    /// `maxIds`, each a panorama id, each once.
    public init(validating ids: [String]) throws(InvalidDocument) {
        guard ids.count <= Self.maxIds else { throw InvalidDocument("panoramaIds must be an array of at most \(Self.maxIds) panorama ids") }
        var seen = Set<String>()
        for id in ids {
            _ = try Identifier.validated(id, "each of panoramaIds")
            guard seen.insert(id).inserted else { throw InvalidDocument("panoramaIds lists \(id) twice") }
        }
        self.init(panoramaIds: ids)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("panoramaIds"); writer.array(panoramaIds) { $0.string($1) }
        }
    }
}

public enum PlanMode: String, Sendable {
    case newScan
    case continueScan
}

/// One room of a plan upload. `outline` and `capture` are canonical JSON text.
public struct RoomInput: Equatable, Sendable {
    public var id: String
    public var name: String?
    public var outline: String
    public var height: Double?
    /// The capture's opaque output.
    public var capture: String?

    public init(id: String, name: String?, outline: String, height: Double?, capture: String?) {
        self.id = id
        self.name = name
        self.outline = outline
        self.height = height
        self.capture = capture
    }
}

/// The body of PUT /v1/floors/{fid}/plan.
public struct PlanInput: Equatable, Sendable, JSONDocument {
    public var planId: String
    public var mode: PlanMode
    public var rooms: [RoomInput]
    /// The floor's opaque capture output, canonical JSON text.
    public var structure: String?

    public static let maxRooms = 500
    /// Outline points in one room.
    public static let pointsPerRoom = 3...10_000
    /// Outline points in all the plan's rooms (a floor's rooms have tens each): 500 rooms of
    /// 10,000 points took minutes of CPU and a gigabyte to store.
    public static let maxPoints = 100_000
    /// How far from the origin an outline point may be, in metres, by default: a building is
    /// metres to a few kilometres across; past this a drawing's arithmetic loses its meaning.
    public static let defaultMaxCoordinate = 100_000.0

    public init(planId: String, mode: PlanMode, rooms: [RoomInput], structure: String?) {
        self.planId = planId
        self.mode = mode
        self.rooms = rooms
        self.structure = structure
    }

    /// The plan, and its canonical bytes (the same plan re-sent with other key order or
    /// spacing has the same bytes: what tells a planId's other content apart).
    public static func parse(_ bytes: [UInt8], maxDepth: Int = JSONReader.defaultMaxDepth,
                             maxCoordinate: Double = defaultMaxCoordinate) throws(InvalidDocument) -> (plan: PlanInput, canonical: [UInt8]) {
        let value = try Fields.value(bytes, maxDepth: maxDepth)
        let json = try Fields(value, context: "body")
        let planId = try Identifier.validated(try json.string("planId"), "planId")
        guard let mode = PlanMode(rawValue: try json.string("mode")) else { throw InvalidDocument("mode must be newScan or continueScan") }
        let roomValues = try json.array("rooms")
        guard roomValues.count <= maxRooms else { throw InvalidDocument("a plan has at most \(maxRooms) rooms") }
        var rooms: [RoomInput] = []
        var seen = Set<String>()
        var points = 0
        for (index, value) in roomValues.enumerated() {
            guard value.members != nil else { throw InvalidDocument("rooms[\(index)] must be an object") }
            let room = try Fields(value, context: "rooms[\(index)]")
            let id = try Identifier.validated(try room.string("id"), "rooms[\(index)].id")
            guard seen.insert(id).inserted else { throw InvalidDocument("room \(id) appears twice in the plan") }
            let name = try room.optionalString("name").map { text throws(InvalidDocument) in try DisplayName.validated(text, "rooms[\(index)].name") }
            let outlinePoints = try room.array("outline")
            points += outlinePoints.count
            guard points <= maxPoints else { throw InvalidDocument("a plan has at most \(maxPoints) outline points in all its rooms") }
            let outline = try outline(outlinePoints, index, maxCoordinate: maxCoordinate)
            let height = try room.optionalNumber("height")
            if let height, !(height > 0 && height < 100) { throw InvalidDocument("rooms[\(index)].height must be between 0 and 100 metres") }
            rooms.append(RoomInput(id: id, name: name, outline: outline, height: height, capture: room.canonical("capture")))
        }
        let plan = PlanInput(planId: planId, mode: mode, rooms: rooms, structure: json.canonical("structure"))
        return (plan, value.canonicalBytes)
    }

    /// outline: an array of [x, y] points, at least 3, finite numbers within `maxCoordinate`
    /// metres of the origin; as canonical text.
    private static func outline(_ points: [JSONValue], _ index: Int, maxCoordinate: Double) throws(InvalidDocument) -> String {
        guard pointsPerRoom.contains(points.count) else {
            throw InvalidDocument("rooms[\(index)].outline needs \(pointsPerRoom.lowerBound) to \(pointsPerRoom.upperBound) points")
        }
        var writer = JSONWriter(capacity: points.count * 12)
        var valid = true, bounded = true
        writer.array(points) { writer, point in
            guard let pair = point.array, pair.count == 2, let x = pair[0].double, let y = pair[1].double else {
                valid = false
                return
            }
            if !(abs(x) <= maxCoordinate && abs(y) <= maxCoordinate) { bounded = false }
            writer.array([x, y]) { $0.double($1) }
        }
        guard valid else { throw InvalidDocument("rooms[\(index)].outline must be [[x, y], ...] of numbers") }
        guard bounded else {
            throw InvalidDocument("rooms[\(index)].outline has a point farther than \(Int(maxCoordinate)) metres from the origin")
        }
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The upload as the client sends it: opaque values spliced as the text they are.
    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("mode"); writer.string(mode.rawValue)
            writer.key("planId"); writer.string(planId)
            writer.key("rooms")
            writer.array(rooms) { writer, room in
                writer.object { writer in
                    writer.key("capture"); writer.raw(room.capture)
                    writer.key("height"); writer.double(room.height)
                    writer.key("id"); writer.string(room.id)
                    writer.key("name"); writer.string(room.name)
                    writer.key("outline"); writer.raw(room.outline)
                }
            }
            if let structure { writer.key("structure"); writer.raw(structure) }
        }
    }
}
