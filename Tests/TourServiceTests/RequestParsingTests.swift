import Foundation
import Testing
@testable import TourService

/// The pure parsers of request bodies and headers.
@Suite struct RequestParsingTests {
    @Test func thePlanDigestIgnoresKeyOrderAndSpacing() throws {
        let a = #"{"planId":"11111111-1111-4111-8111-111111111111","mode":"newScan","rooms":[{"id":"22222222-2222-4222-8222-222222222222","outline":[[0,0],[1,0],[1,1]],"name":"K"}]}"#
        let b = #"{ "rooms" : [ { "name" : "K", "outline" : [ [0, 0], [1, 0], [1, 1] ], "id" : "22222222-2222-4222-8222-222222222222" } ], "mode" : "newScan", "planId" : "11111111-1111-4111-8111-111111111111" }"#
        let c = #"{"planId":"11111111-1111-4111-8111-111111111111","mode":"newScan","rooms":[{"id":"22222222-2222-4222-8222-222222222222","outline":[[0,0],[1,0],[1,1]],"name":"L"}]}"#
        let digestA = try PlanInput.parse(Array(a.utf8)).digest
        #expect(try PlanInput.parse(Array(b.utf8)).digest == digestA)
        #expect(try PlanInput.parse(Array(c.utf8)).digest != digestA)
    }

    /// Security findings: a NUL cut what was stored; "a" with 200,000 combining marks counted
    /// as one character; metadata keys and values had no length.
    @Test(arguments: [
        ("name \u{0}xyz", "control characters"), ("tab\there", "control characters"), ("bell\u{7}", "control characters"),
        ("a" + String(repeating: "\u{301}", count: 200_000), "bytes in UTF-8"), ("", "1 to 200 characters"),
    ])
    func namesArePrintableAndBoundedInBytes(name: String, reason: String) throws {
        let body = try JSONSerialization.data(withJSONObject: ["name": name, "floorCount": 1])
        let error = #expect(throws: ServiceError.self) { try PropertyInput.parse(Array(body)) }
        #expect(error?.message.contains(reason) == true, "\(String(describing: error?.message))")
        let floor = try JSONSerialization.data(withJSONObject: ["number": 0, "name": name])
        #expect(throws: ServiceError.self) { try FloorInput.parse(Array(floor)) }
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
        #expect(throws: ServiceError.self) { try parse(["k": String(repeating: "v", count: 4097)]) }
        #expect(throws: ServiceError.self) { try parse([String(repeating: "k", count: 129): "v"]) }
        #expect(throws: ServiceError.self) { try parse(["": "v"]) }
        #expect(throws: ServiceError.self) { try parse(["a\u{0}b": "v"]) }
        let big = String(repeating: "v", count: 4000)
        #expect(try parse(["a": big, "b": big, "c": big, "d": big]).metadata.count == 4) // 16,004 bytes
        #expect(throws: ServiceError.self) { try parse(["a": big, "b": big, "c": big, "d": big, "e": String(repeating: "v", count: 400)]) }
    }

    /// Security finding: a plan near the body limit took 84 s of CPU to store.
    @Test func aPlanHasABoundedNumberOfOutlinePoints() throws {
        func plan(rooms: Int, points: Int) throws -> [UInt8] {
            let outline = (0..<points).map { [Double($0), Double($0 % 7)] }
            let roomValues = (0..<rooms).map { _ in ["id": UUID().uuidString.lowercased(), "outline": outline] as [String: Any] }
            return Array(try JSONSerialization.data(withJSONObject: ["planId": UUID().uuidString.lowercased(), "mode": "newScan", "rooms": roomValues]))
        }
        #expect(try PlanInput.parse(try plan(rooms: 10, points: 10_000)).rooms.count == 10)
        let error = #expect(throws: ServiceError.self) { try PlanInput.parse(try plan(rooms: 11, points: 10_000)) }
        #expect(error?.message.contains("100000 outline points") == true)
    }

    @Test func reprDigestTakesSHA256AmongOthers() throws {
        let bytes = [UInt8](repeating: 7, count: 32)
        let encoded = Data(bytes).base64EncodedString()
        #expect(try ReprDigest.sha256("sha-512=:\(Data(count: 64).base64EncodedString()):, sha-256=:\(encoded):") == bytes)
        #expect(try ReprDigest.sha256(nil) == nil)
    }

    @Test(arguments: [
        ("bytes=0-9", ByteRange.part(0..<10)),
        ("bytes=5-", .part(5..<100)),
        ("bytes=-5", .part(95..<100)),
        ("bytes=90-200", .part(90..<100)),
        ("bytes=100-", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),
        ("bytes=5-2", .whole),
        ("bytes=0-1,3-4", .whole),
        ("items=0-1", .whole),
    ])
    func byteRanges(header: String, expected: ByteRange) {
        #expect(ByteRange.parse(header, size: 100) == expected)
    }

    @Test func identifiersAreLowercaseCanonicalUUIDs() {
        #expect(Identifier.isValid("11111111-1111-4111-8111-111111111111"))
        #expect(!Identifier.isValid("11111111-1111-4111-8111-11111111111G"))
        #expect(!Identifier.isValid("11111111111141118111111111111111"))
        #expect(!Identifier.isValid("../../../../etc/passwd-000000000000"))
        #expect(Identifier.isValid(Identifier.make()))
    }
}

@Suite struct JSONWriterTests {
    @Test func writesWhatFoundationReadsBackSortedAndCompact() throws {
        let value: [String: Any] = [
            "z": "quote \" backslash \\ newline \n tab \t control \u{01} snowman ☃", "a": 1, "int64": Int64(1) << 40,
            "double": 2.5, "whole": 3.0, "small": 1e-7, "bool": true, "false": false, "null": NSNull(),
            "nested": ["list": [1, "two", ["x": NSNull()]] as [Any]], "strings": ["k": "v"] as [String: String], "empty": [Any](),
        ]
        let bytes = encodeJSON(value)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"a":1,"bool":true,"double":2.5,"empty":[],"false":false,"int64":1099511627776,"#))
        #expect(String(decoding: encodeJSON(["b": [1, 2], "a": "x y"] as [String: Any]), as: UTF8.self) == #"{"a":"x y","b":[1,2]}"#)
        let read = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(read["z"] as? String == value["z"] as? String)
        #expect(read["whole"] as? Int == 3)
        #expect(read["small"] as? Double == 1e-7)
        #expect(read["null"] is NSNull)
        #expect(((read["nested"] as? [String: Any])?["list"] as? [Any])?.count == 3)
    }

    @Test func clientJSONTheWriterCannotCarryIs400NotACrash() {
        let error = #expect(throws: ServiceError.self) { _ = try JSONObject.encode(["x": Float(1.5)], "structure") }
        #expect(error?.code == .badRequest)
        #expect(error?.message.contains("structure") == true)
        // What Foundation's parser makes of huge numbers still encodes.
        let huge = try? JSONSerialization.jsonObject(with: Data(#"{"a": 99999999999999999999999}"#.utf8))
        #expect((try? JSONObject.encode(huge as Any, "structure")) != nil)
    }

    @Test func foundationNumbersKeepTheirKind() throws {
        // Values decoded from stored JSON come back as NSNumber: booleans stay booleans.
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(#"{"b":true,"i":7,"d":0.5}"#.utf8)) as? [String: Any])
        #expect(String(decoding: encodeJSON(decoded), as: UTF8.self) == #"{"b":true,"d":0.5,"i":7}"#)
    }
}

/// Every service error becomes the status of API.md's table.
@Suite struct ServiceErrorTests {
    @Test func eachCodeMapsToItsStatus() {
        let statuses: [ServiceError.Code: Int] = [
            .badRequest: 400, .digestMismatch: 400, .unauthorized: 401, .notFound: 404, .conflict: 409, .notContinuable: 409,
            .offsetMismatch: 409, .preconditionFailed: 412, .payloadTooLarge: 413, .unsupportedMediaType: 415,
            .rangeNotSatisfiable: 416, .checksumMismatch: 460, .internal: 500, .insufficientStorage: 507,
        ]
        for code in ServiceError.Code.allCases {
            let error = ServiceError(code, "m").httpError
            #expect(error.status.code == statuses[code], "\(code)")
            #expect(error.code == code.rawValue)
        }
        #expect(ServiceError(.unauthorized, "m").httpError.headers.contains { $0.name == "WWW-Authenticate" })
        #expect(ServiceError(.preconditionFailed, "m").httpError.headers.contains { $0.name == "Tus-Version" })
    }
}

/// `Authorization: Bearer <token>` (RFC 6750 §2.1), the scheme in any case (RFC 9110 §11.1).
@Suite struct BearerTokenTests {
    @Test(arguments: [("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER  abc ", "abc"), ("Bearer nt_A-b_9", "nt_A-b_9")])
    func theTokenIsWhatFollowsTheScheme(header: String, token: String) {
        #expect(BearerToken.parse(header) == token)
    }

    @Test(arguments: ["Bearer", "Bearer ", "Bearer    ", "Basic abc", "Bearerabc", "Bearxr abc", ""])
    func anythingElseIsNoToken(header: String) {
        #expect(BearerToken.parse(header) == nil)
    }
}
