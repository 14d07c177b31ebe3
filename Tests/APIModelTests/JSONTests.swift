import NTAPIModel
import Foundation
import Testing

/// Our JSON reader and writer (RFC 8259): strict reading, canonical writing.
@Suite struct JSONReaderTests {
    @Test func readsEveryKindOfValue() throws {
        let value = try JSONReader.parse(#" {"s": "a\"b\\c\/d\n\u00e9\ud83d\ude00", "n": -12.5e3, "i": 0, "t": true, "f": false, "z": null, "a": [1, [], {}]} "#)
        #expect(value["s"] == .string("a\"b\\c/d\né😀"))
        #expect(value["n"] == .number("-12.5e3"))
        #expect(value["n"]?.double == -12500)
        #expect(value["i"]?.integer == 0)
        #expect(value["t"] == .bool(true) && value["f"] == .bool(false) && value["z"] == .null)
        #expect(value["a"] == .array([.number("1"), .array([]), .object([])]))
        #expect(value.members?.map(\.key) == ["s", "n", "i", "t", "f", "z", "a"]) // in order
    }

    @Test(arguments: [
        ("", "ends"), ("{", "key must be a string"), (#"{"a" 1}"#, "':'"), (#"{"a":1,}"#, "key must be a string"), ("[1,]", "unexpected character"),
        ("[1 2]", "',' or ']'"), ("01", "start with 0"), ("1.", "decimal point"), ("1e", "exponent"), ("-", "digit"), ("+1", "unexpected character"),
        ("tru", "unexpected"), (#""abc"#, "not closed"), ("\"a\u{1}b\"", "control character"), (#""\x""#, "unknown escape"),
        (#""\ud83d""#, "low one"), (#""\ude00""#, "low surrogate"), (#""\u12g4""#, "four hex digits"), (#"{"a":1,"a":2}"#, "appears twice"),
        ("1 2", "after the value"), ("NaN", "unexpected character"), ("[" + String(repeating: "[", count: 64) + "]", "nested deeper than 64"),
    ])
    func refusesWhatIsNotJSONAndSaysWhy(text: String, reason: String) {
        let error = #expect(throws: JSONReader.Failure.self) { try JSONReader.parse(text) }
        #expect(error?.message.contains(reason) == true, "\(text): \(String(describing: error?.message))")
    }

    /// Keys are checked among the members while an object is small and in a set after: a key
    /// given twice is refused wherever the two fall, and many keys read in linear time.
    @Test func aKeyGivenTwiceIsRefusedBeforeAndAfterTheObjectGrowsLarge() throws {
        let from = JSONReader.SeenKeys.setFrom
        func object(_ keys: [Int]) -> String { "{" + keys.map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}" }
        for (count, repeated) in [(3, 0), (from, 0), (from + 1, 0), (from + 1, from - 1), (3 * from, 1), (3 * from, 2 * from)] {
            let text = object(Array(0..<count) + [repeated])
            let error = #expect(throws: JSONReader.Failure.self) { try JSONReader.parse(text) }
            #expect(error?.message.contains("\"k\(repeated)\" appears twice") == true, "\(count) then k\(repeated): \(String(describing: error?.message))")
            #expect(try JSONReader.parse(object(Array(0..<count))).members?.count == count)
        }
        #expect(try JSONReader.parse(object(Array(0..<50_000))).members?.count == 50_000)
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONReader.Failure.self) { try JSONReader.parse([0x22, 0xff, 0xfe, 0x22]) }
    }

    @Test func nestsUpToTheLimit() throws {
        let deep = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONReader.parse(deep) }
    }

    /// What Foundation reads, we read as the same value (a random sample of documents).
    @Test func agreesWithFoundationOnWhatItAccepts() throws {
        let samples = [#"{"a":[1,2.5,-3e-2,true,null,"x\ty"],"b":{"c":{}}}"#, #"[{"k":"\u00fc\u20ac"},"😀",0.1]"#, #""plain""#, "42"]
        for sample in samples {
            let ours = try JSONReader.parse(sample).canonicalBytes
            let theirs = try JSONSerialization.jsonObject(with: Data(sample.utf8), options: [.fragmentsAllowed])
            let back = try JSONSerialization.jsonObject(with: Data(ours), options: [.fragmentsAllowed])
            #expect((back as? NSObject) == (theirs as? NSObject), "\(sample)")
        }
    }
}

@Suite struct JSONWriterTests {
    @Test func canonicalFormSortsKeysAndNormalizesNumbers() throws {
        let a = try JSONReader.parse(#"{ "b" : [1.0, 1e2, 2.50, -0, 12345678901234567890], "a" : "x", "é": {"z":1,"y":2} }"#)
        #expect(a.canonicalText == #"{"a":"x","b":[1,100,2.5,0,1.2345678901234567e+19],"é":{"y":2,"z":1}}"#)
        let b = try JSONReader.parse(#"{"é":{"y":2,"z":1},"a":"x","b":[1,100,2.5,0,12345678901234567890]}"#)
        #expect(a.canonicalBytes == b.canonicalBytes)
        // Canonical text reads back as itself.
        #expect(try JSONReader.parse(a.canonicalText).canonicalText == a.canonicalText)
    }

    @Test func stringsAreEscapedAsRFC8259Asks() throws {
        var writer = JSONWriter()
        writer.string("quote \" backslash \\ newline \n tab \t control \u{01} snowman ☃")
        let text = String(decoding: writer.bytes, as: UTF8.self)
        #expect(text == #""quote \" backslash \\ newline \n tab \t control \u0001 snowman ☃""#)
        #expect(try JSONReader.parse(writer.bytes) == .string("quote \" backslash \\ newline \n tab \t control \u{01} snowman ☃"))
    }
}

/// The documents: what the server writes, the client reads back as the same value; the same
/// state always encodes to the same bytes.
@Suite struct DocumentTests {
    static let property = PropertyDocument(id: "11111111-1111-4111-8111-111111111111", tourId: "22222222-2222-4222-8222-222222222222",
                                           name: "Villa", floorCount: 1, metadata: #"{"ref":"A-1"}"#,
                                           createdAt: "2026-12-01T00:00:00.000Z", updatedAt: "2026-12-01T00:00:01.000Z")

    static func tour() -> TourDocument {
        let room = RoomDocument(id: "33333333-3333-4333-8333-333333333333", floorId: "44444444-4444-4444-8444-444444444444", name: "K",
                                outline: "[[0,0],[4,0],[4,3]]", height: 2.5, capture: #"{"walls":[1,2]}"#)
        let floor = FloorDocument(id: room.floorId, propertyId: property.id, number: 0, name: nil, planRevision: 2, continuable: true, rooms: [room])
        let panorama = PanoramaDocument(id: "55555555-5555-4555-8555-555555555555", propertyId: property.id, floorId: floor.id, roomId: room.id,
                                        contentType: "image/jpeg", size: 1234, sha256: String(repeating: "a", count: 64), createdAt: "2026-12-01T00:00:02.000Z",
                                        position: try! PanoramaPosition(x: 1.5, y: 2, heading: 45), state: .ready,
                                        fileGeometry: PanoramaFileGeometry(projection: "equirectangular",
                                                                           crop: .init(fullWidth: 8000, fullHeight: 4000, left: 10, top: 1000, width: 7990, height: 2000),
                                                                           orientation: 6))
        return TourDocument(tourId: property.tourId, property: property, floors: [
            .init(floor: floor, plan: .init(revision: 2, structure: #"{"v":1}"#),
                  worldMap: .init(sha256: String(repeating: "b", count: 64), size: 99, url: "/v1/floors/\(floor.id)/worldmap"), panoramas: [panorama]),
        ])
    }

    @Test func theSameStateIsTheSameBytes() throws {
        #expect(Self.tour().jsonBytes == Self.tour().jsonBytes)
        let read = try TourDocument(try JSONReader.parse(Self.tour().jsonBytes))
        #expect(read == Self.tour())
        #expect(read.jsonBytes == Self.tour().jsonBytes)
    }

    @Test func keysAreSortedAsTheAPIHasAlwaysWrittenThem() throws {
        let text = String(decoding: Self.tour().jsonBytes, as: UTF8.self)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let sorted = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        #expect(try JSONReader.parse(Array(sorted)).canonicalText == (try JSONReader.parse(text)).canonicalText)
        let floor = try #require((object["floors"] as? [[String: Any]])?.first)
        #expect((floor["rooms"] as? [[String: Any]])?.first?["capture"] as? [String: [Int]] == ["walls": [1, 2]])
        #expect((floor["panoramas"] as? [[String: Any]])?.first?["contentUrl"] as? String == "/v1/panoramas/55555555-5555-4555-8555-555555555555/content")
        #expect(text.hasPrefix(#"{"floors":[{"continuable":true,"id":"44444444-4444-4444-8444-444444444444","name":null,"number":0,"panoramas":["#))
    }

    @Test func pagesAndErrorsRead() throws {
        let page = PropertyPage(items: [Self.property], next: Self.property.id)
        #expect(try PropertyPage(try JSONReader.parse(page.jsonBytes)) == page)
        #expect(try JSONReader.parse(Self.property.metadata).stringMap == ["ref": "A-1"])
        let error = try ErrorDocument(try JSONReader.parse(#"{"error":{"code":"not_found","message":"no floor x","retryable":false}}"#))
        #expect(error.code == "not_found" && error.message == "no floor x")
        #expect(throws: InvalidDocument.self) { try PropertyDocument(try JSONReader.parse(#"{"id":1}"#)) }
    }
}
