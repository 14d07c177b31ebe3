import Foundation
import Hashing

/// A name people read (a property's, a floor's, a room's): 1–200 characters after trimming,
/// at most 800 UTF-8 bytes (one character can be a letter with any number of combining marks
/// after it), and no control character (a NUL had cut what was stored).
enum DisplayName {
    static let maxCharacters = 200
    static let maxBytes = 800

    static func validated(_ text: String, _ field: String) throws(ServiceError) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...maxCharacters).contains(name.count) else { throw .badRequest("\(field) must be 1 to \(maxCharacters) characters after trimming") }
        guard name.utf8.count <= maxBytes else { throw .badRequest("\(field) is longer than \(maxBytes) bytes in UTF-8") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badRequest("\(field) must not contain control characters")
        }
        return name
    }
}

/// The body of PUT /v1/properties/{id}.
struct PropertyInput: Equatable {
    var name: String
    var floorCount: Int
    var metadata: [String: String]

    static let maxMetadataKeys = 64
    static let maxMetadataKeyBytes = 128
    static let maxMetadataValueBytes = 4096
    /// All keys and values together (the client library's limit on the same metadata,
    /// JSON-encoded, is 16 KiB: whatever it accepts passes here). A listing of 200
    /// properties stays a few MB.
    static let maxMetadataBytes = 16 * 1024

    /// Parses and checks API.md's rules: name a DisplayName, floorCount 1–200, metadata string
    /// to string with at most 64 keys, each key 1–128 UTF-8 bytes without control characters,
    /// each value at most 4096 bytes.
    static func parse(_ bytes: [UInt8]) throws(ServiceError) -> PropertyInput {
        let json = try JSONObject.parse(bytes)
        let name = try DisplayName.validated(try json.string("name"), "name")
        let floorCount = try json.integer("floorCount")
        guard (1...200).contains(floorCount) else { throw .badRequest("floorCount must be 1 to 200") }
        var metadata: [String: String] = [:]
        if let object = try json.object("metadata") {
            guard object.values.count <= maxMetadataKeys else { throw .badRequest("metadata has more than \(maxMetadataKeys) keys") }
            for key in object.values.keys {
                guard (1...maxMetadataKeyBytes).contains(key.utf8.count),
                      !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                    throw .badRequest("a metadata key is 1 to \(maxMetadataKeyBytes) bytes in UTF-8, without control characters")
                }
                guard let value = object.values[key] as? String else { throw .badRequest("metadata.\(key) must be a string") }
                guard value.utf8.count <= maxMetadataValueBytes else { throw .badRequest("metadata.\(key) is longer than \(maxMetadataValueBytes) bytes") }
                metadata[key] = value
            }
        }
        guard metadata.reduce(0, { $0 + $1.key.utf8.count + $1.value.utf8.count }) <= maxMetadataBytes else {
            throw .badRequest("metadata is larger than \(maxMetadataBytes) bytes in all")
        }
        return PropertyInput(name: name, floorCount: floorCount, metadata: metadata)
    }
}

/// The body of PUT /v1/properties/{pid}/floors/{fid}.
struct FloorInput: Equatable {
    var number: Int
    var name: String?

    static func parse(_ bytes: [UInt8]) throws(ServiceError) -> FloorInput {
        let json = try JSONObject.parse(bytes)
        let number = try json.integer("number")
        guard (-10...500).contains(number) else { throw .badRequest("number must be -10 to 500") }
        let name = try json.optionalString("name").map { text throws(ServiceError) in try DisplayName.validated(text, "name") }
        return FloorInput(number: number, name: name)
    }
}

enum StructureCaptureMode: String {
    case newScan
    case continueScan
}

/// One room of a plan upload.
struct RoomInput: Equatable {
    var id: String
    var name: String?
    var outline: String       // JSON [[x, y], ...]
    var height: Double?
    var capture: String?      // opaque JSON
}

/// The body of PUT /v1/floors/{fid}/plan.
struct PlanInput: Equatable {
    var planId: String
    var mode: StructureCaptureMode
    var rooms: [RoomInput]
    var structure: String?
    /// The digest of the body, so another plan under the same planId is told apart.
    var digest: String

    static let maxRooms = 500
    /// Outline points in all the plan's rooms (a floor's rooms have tens each): 500 rooms of
    /// 10,000 points took minutes of CPU and a gigabyte to store.
    static let maxPoints = 100_000

    static func parse(_ bytes: [UInt8]) throws(ServiceError) -> PlanInput {
        let json = try JSONObject.parse(bytes)
        let planId = try Identifier.validated(try json.string("planId"), "planId")
        guard let mode = StructureCaptureMode(rawValue: try json.string("mode")) else {
            throw .badRequest("mode must be newScan or continueScan")
        }
        let roomValues = try json.array("rooms")
        guard roomValues.count <= maxRooms else { throw .badRequest("a plan has at most \(maxRooms) rooms") }
        var rooms: [RoomInput] = []
        var seen = Set<String>()
        var points = 0
        for (index, value) in roomValues.enumerated() {
            guard let object = value as? [String: Any] else { throw .badRequest("rooms[\(index)] must be an object") }
            let room = JSONObject(values: object, context: "rooms[\(index)]")
            let id = try Identifier.validated(try room.string("id"), "rooms[\(index)].id")
            guard seen.insert(id).inserted else { throw .badRequest("room \(id) appears twice in the plan") }
            let name = try room.optionalString("name").map { text throws(ServiceError) in try DisplayName.validated(text, "rooms[\(index)].name") }
            let outlinePoints = try room.array("outline")
            points += outlinePoints.count
            guard points <= maxPoints else { throw .badRequest("a plan has at most \(maxPoints) outline points in all its rooms") }
            let outline = try parseOutline(outlinePoints, index)
            let height = try room.optionalNumber("height")
            if let height, !(height > 0 && height < 100) { throw .badRequest("rooms[\(index)].height must be between 0 and 100 metres") }
            rooms.append(RoomInput(id: id, name: name, outline: outline, height: height, capture: try room.rawJSON("capture")))
        }
        let structure = try json.rawJSON("structure")
        // Over a canonical encoding: the same plan re-sent with other key order or spacing is
        // the same plan.
        let canonical = Array(try JSONObject.encode(json.values, "plan").utf8)
        return PlanInput(planId: planId, mode: mode, rooms: rooms, structure: structure,
                         digest: ByteEncoding.hex(StreamingDigest.hash(.sha256, canonical)))
    }

    /// outline: an array of [x, y] points, at least 3, finite numbers.
    private static func parseOutline(_ points: [Any], _ index: Int) throws(ServiceError) -> String {
        guard points.count >= 3, points.count <= 10_000 else { throw .badRequest("rooms[\(index)].outline needs 3 to 10000 points") }
        var clean: [[Double]] = []
        for point in points {
            guard let pair = point as? [Any], pair.count == 2, let x = JSONObject.number(pair[0]), let y = JSONObject.number(pair[1]) else {
                throw .badRequest("rooms[\(index)].outline must be [[x, y], ...] of numbers")
            }
            clean.append([x, y])
        }
        return try JSONObject.encode(clean, "outline")
    }
}

/// Panorama media types (API.md: jpeg, heic, png).
enum PanoramaMediaType {
    static let allowed: Set<String> = ["image/jpeg", "image/heic", "image/png"]

    /// The media type without parameters, lowercased, when allowed.
    static func validated(_ header: String?) throws(ServiceError) -> String {
        let type = (header ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard allowed.contains(type) else {
            throw ServiceError(.unsupportedMediaType, "a panorama must be image/jpeg, image/heic or image/png, not \"\(type.prefix(100))\"")
        }
        return type
    }
}

/// `Repr-Digest` (RFC 9530 §3): a structured-field dictionary of algorithm to byte sequence.
/// Only sha-256 is used; other algorithms are ignored as §3 allows.
enum ReprDigest {
    /// The SHA-256 the client declared, or nil when there is no header.
    static func sha256(_ header: String?) throws(ServiceError) -> [UInt8]? {
        guard let header else { return nil }
        for member in header.split(separator: ",") {
            let parts = member.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { throw .badRequest("malformed Repr-Digest") }
            let key = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            var value = parts[1].trimmingCharacters(in: .whitespaces)
            // Parameters after ';' belong to the member, not the value.
            if let semicolon = value.firstIndex(of: ";") { value = String(value[..<semicolon]) }
            guard value.count >= 2, value.hasPrefix(":"), value.hasSuffix(":"),
                  let bytes = ByteEncoding.bytes(fromBase64: value.dropFirst().dropLast()) else {
                throw .badRequest("malformed Repr-Digest: a digest is :base64:")
            }
            if key == "sha-256" {
                guard bytes.count == 32 else { throw .badRequest("a sha-256 digest is 32 bytes") }
                return bytes
            }
        }
        throw .badRequest("Repr-Digest has no sha-256")
    }
}
