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
