// make bench: our JSON reader and writer (APIModel) beside the toolchain's JSONEncoder and
// JSONDecoder on the same documents, in the same run: the measurement behind the choice in
// docs/http-core.md. The tour document of bench/documents.sh (30 rooms with capture output,
// 200 panoramas) written, and a plan of 30 rooms read.
import NTAPIModel
import Foundation

/// Opaque capture output as Codable has to carry it: a value tree.
enum AnyJSON: Codable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([AnyJSON]), object([String: AnyJSON])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let flag = try? container.decode(Bool.self) { self = .bool(flag) }
        else if let number = try? container.decode(Double.self) { self = .number(number) }
        else if let text = try? container.decode(String.self) { self = .string(text) }
        else if let array = try? container.decode([AnyJSON].self) { self = .array(array) }
        else { self = .object(try container.decode([String: AnyJSON].self)) }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }
}

struct CodableRoom: Codable { var id, floorId: String; var name: String?; var outline: [[Double]]; var height: Double?; var capture: AnyJSON? }
struct CodablePanorama: Codable { var id, propertyId, floorId: String; var roomId: String?; var contentType: String; var size: Int64; var sha256, createdAt, contentUrl: String }
struct CodableFloor: Codable { var id, propertyId: String; var number: Int; var name: String?; var planRevision: Int; var continuable: Bool; var rooms: [CodableRoom]; var panoramas: [CodablePanorama] }
struct CodableProperty: Codable { var id, tourId, name: String; var floorCount: Int; var metadata: [String: String]; var createdAt, updatedAt: String }
struct CodableTour: Codable { var tourId: String; var property: CodableProperty; var floors: [CodableFloor] }
struct CodablePlanRoom: Codable { var id: String; var name: String?; var outline: [[Double]]; var height: Double?; var capture: AnyJSON? }
struct CodablePlan: Codable { var planId, mode: String; var rooms: [CodablePlanRoom]; var structure: AnyJSON? }

func id(_ n: Int) -> String { String(format: "%08x-0000-4000-8000-%012x", n, n) }
let captureText = #"{"confidence":0.93,"walls":[{"height":2.6,"length":4.25},{"height":2.6,"length":4.25},{"height":2.6,"length":4.25},{"height":2.6,"length":4.25}]}"#
let property = PropertyDocument(id: id(1), tourId: id(2), name: "Measured", floorCount: 1, metadata: #"{"ref":"R-1"}"#,
                                createdAt: "2026-12-01T00:00:00.000Z", updatedAt: "2026-12-01T00:00:00.000Z")
let rooms = (0..<30).map { RoomDocument(id: id(100 + $0), floorId: id(3), name: "Room \($0)", outline: "[[\($0),0],[\(Double($0) + 4.25),0],[\(Double($0) + 4.25),3.5],[\($0),3.5]]", height: 2.6, capture: captureText) }
let panoramas = (0..<200).map { PanoramaDocument(id: id(1000 + $0), propertyId: property.id, floorId: id(3), roomId: rooms[$0 % 30].id, contentType: "image/jpeg",
                                                 size: 64, sha256: String(repeating: "ab", count: 32), createdAt: "2026-12-01T00:00:00.000Z") }
let tour = TourDocument(tourId: property.tourId, property: property, floors: [
    .init(floor: FloorDocument(id: id(3), propertyId: property.id, number: 0, name: "Ground floor", planRevision: 1, continuable: false, rooms: rooms),
          plan: .init(revision: 1, structure: #"{"doors":31,"walls":120}"#), worldMap: nil, panoramas: panoramas),
])
let codableTour = try JSONDecoder().decode(CodableTour.self, from: Data(tour.jsonBytes))
let plan = PlanInput(planId: id(4), mode: .newScan, rooms: rooms.map { RoomInput(id: $0.id, name: $0.name, outline: $0.outline, height: $0.height, capture: $0.capture) },
                     structure: #"{"doors":31,"walls":120}"#)
let planBytes = plan.jsonBytes

/// Median microseconds per call of `body` over 9 rounds of `count` calls.
func measure(_ count: Int, _ body: () throws -> Int) rethrows -> Double {
    var rounds: [Double] = []
    var sink = 0
    for _ in 0..<9 {
        let start = ContinuousClock.now
        for _ in 0..<count { sink &+= try body() }
        let elapsed = ContinuousClock.now - start
        rounds.append((Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(count))
    }
    precondition(sink > 0)
    return rounds.sorted()[4]
}

let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
let oursWrite = measure(200) { tour.jsonBytes.count }
let theirsWrite = try measure(200) { try encoder.encode(codableTour).count }
let oursRead = try measure(500) { try PlanInput.parse(planBytes).plan.rooms.count }
let theirsRead = try measure(500) { try JSONDecoder().decode(CodablePlan.self, from: Data(planBytes)).rooms.count }
print("JSON: APIModel's reader and writer beside Foundation's JSONEncoder/JSONDecoder, same documents, same run (median of 9 rounds)")
print(String(format: "  write the tour document (%d KB): ours %.0f µs, JSONEncoder (.sortedKeys) %.0f µs (ours %.2fx its time)",
             tour.jsonBytes.count / 1000, oursWrite, theirsWrite, oursWrite / theirsWrite))
print(String(format: "  read and check a plan of 30 rooms (%d KB): ours %.0f µs, JSONDecoder %.0f µs (ours %.2fx its time)",
             planBytes.count / 1000, oursRead, theirsRead, oursRead / theirsRead))
