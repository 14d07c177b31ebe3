import NTAPIModel
import Foundation
import Testing

/// The request bodies' parsers: the rules and messages of docs/api.md, in one place for server and
/// client.
@Suite struct RequestTests {
    /// Security findings: a NUL cut what was stored; "a" with 200,000 combining marks counted
    /// as one character; metadata keys and values had no length.
    @Test(arguments: [
        ("name \u{0}xyz", "control characters"), ("tab\there", "control characters"), ("bell\u{7}", "control characters"),
        ("a" + String(repeating: "\u{301}", count: 200_000), "bytes in UTF-8"), ("", "1 to 200 characters"),
    ])
    func namesArePrintableAndBoundedInBytes(name: String, reason: String) throws {
        let body = try JSONSerialization.data(withJSONObject: ["name": name, "floorCount": 1])
        let error = #expect(throws: InvalidDocument.self) { try PropertyInput.parse(Array(body)) }
        #expect(error?.message.contains(reason) == true, "\(String(describing: error?.message))")
        let floor = try JSONSerialization.data(withJSONObject: ["number": 0, "name": name])
        #expect(throws: InvalidDocument.self) { try FloorInput.parse(Array(floor)) }
    }

    @Test func namesInAnyScriptWithinTheLimitsPass() throws {
        for name in ["Villa Sonnenschein", "Maison à Nîmes", "東京のアパート", "👩‍👩‍👧 Family house", String(repeating: "é", count: 200)] {
            let body = try JSONSerialization.data(withJSONObject: ["name": name, "floorCount": 1])
            #expect(try PropertyInput.parse(Array(body)).name == name)
        }
    }

    @Test func metadataKeysAndValuesAreBoundedInBytes() throws {
        func parse(_ metadata: [String: String]) throws -> PropertyInput {
            try PropertyInput.parse(Array(try JSONSerialization.data(withJSONObject: ["name": "V", "floorCount": 1, "metadata": metadata])))
        }
        #expect(try parse(["k": String(repeating: "v", count: 4096)]).metadata.count == 1)
        #expect(throws: InvalidDocument.self) { try parse(["k": String(repeating: "v", count: 4097)]) }
        #expect(throws: InvalidDocument.self) { try parse([String(repeating: "k", count: 129): "v"]) }
        #expect(throws: InvalidDocument.self) { try parse(["": "v"]) }
        #expect(throws: InvalidDocument.self) { try parse(["a\u{0}b": "v"]) }
        let big = String(repeating: "v", count: 4000)
        #expect(try parse(["a": big, "b": big, "c": big, "d": big]).metadata.count == 4) // 16,004 bytes
        #expect(throws: InvalidDocument.self) { try parse(["a": big, "b": big, "c": big, "d": big, "e": String(repeating: "v", count: 400)]) }
    }

    /// Security finding: a plan near the body limit took 84 s of CPU to store.
    @Test func aPlanHasABoundedNumberOfOutlinePoints() throws {
        func plan(rooms: Int, points: Int) throws -> [UInt8] {
            let outline = (0..<points).map { [Double($0), Double($0 % 7)] }
            let roomValues = (0..<rooms).map { _ in ["id": UUID().uuidString.lowercased(), "outline": outline] as [String: Any] }
            return Array(try JSONSerialization.data(withJSONObject: ["planId": UUID().uuidString.lowercased(), "mode": "newScan", "rooms": roomValues]))
        }
        #expect(try PlanInput.parse(try plan(rooms: 10, points: 10_000)).plan.rooms.count == 10)
        let error = #expect(throws: InvalidDocument.self) { try PlanInput.parse(try plan(rooms: 11, points: 10_000)) }
        #expect(error?.message.contains("100000 outline points") == true)
    }
    @Test func identifiersAreLowercaseCanonicalUUIDs() {
        #expect(Identifier.isValid("11111111-1111-4111-8111-111111111111"))
        #expect(!Identifier.isValid("11111111-1111-4111-8111-11111111111G"))
        #expect(!Identifier.isValid("11111111111141118111111111111111"))
        #expect(!Identifier.isValid("../../../../etc/passwd-000000000000"))
        #expect(!Identifier.isValid("11111111-1111-4111-8111-11111111111A"))
    }

    /// What the client sends is what the server reads back.
    @Test func requestsReadBackWhatTheyWrite() throws {
        let property = PropertyInput(name: "Villa \"Sun\"", floorCount: 3, metadata: ["ref": "A-1", "ü": "ß"])
        #expect(try PropertyInput.parse(property.jsonBytes) == property)
        let floor = FloorInput(number: -1, name: nil)
        #expect(try FloorInput.parse(floor.jsonBytes) == floor)
        let plan = PlanInput(planId: "11111111-1111-4111-8111-111111111111", mode: .continueScan, rooms: [
            RoomInput(id: "22222222-2222-4222-8222-222222222222", name: "K", outline: "[[0,0],[1.5,0],[1,1]]", height: 2.5, capture: #"{"a":[1,{"b":null}]}"#),
        ], structure: #"{"v":2}"#)
        #expect(try PlanInput.parse(plan.jsonBytes).plan == plan)
    }
}
