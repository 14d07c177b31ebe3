import NTAPIModel
import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage

/// The pure parsers of request bodies and headers.
@Suite(.hangGuard, .testThreads) struct RequestParsingTests {
    @Test func thePlanDigestIgnoresKeyOrderAndSpacing() throws {
        let a = #"{"planId":"11111111-1111-4111-8111-111111111111","mode":"newScan","rooms":[{"id":"22222222-2222-4222-8222-222222222222","outline":[[0,0],[1,0],[1,1]],"name":"K"}]}"#
        let b = #"{ "rooms" : [ { "name" : "K", "outline" : [ [0, 0], [1, 0], [1, 1] ], "id" : "22222222-2222-4222-8222-222222222222" } ], "mode" : "newScan", "planId" : "11111111-1111-4111-8111-111111111111" }"#
        let c = #"{"planId":"11111111-1111-4111-8111-111111111111","mode":"newScan","rooms":[{"id":"22222222-2222-4222-8222-222222222222","outline":[[0,0],[1,0],[1,1]],"name":"L"}]}"#
        let digestA = try PlanUpload.parse(Array(a.utf8)).digest
        #expect(try PlanUpload.parse(Array(b.utf8)).digest == digestA)
        #expect(try PlanUpload.parse(Array(c.utf8)).digest != digestA)
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

    @Test func madeIdentifiersAreValid() {
        #expect(Identifier.isValid(Identifier.make()))
    }
}

/// Every service error becomes the status of docs/api.md's table.
@Suite(.hangGuard, .testThreads) struct ServiceErrorTests {
    @Test func eachCodeMapsToItsStatus() {
        let statuses: [ServiceError.Code: Int] = [
            .badRequest: 400, .digestMismatch: 400, .unauthorized: 401, .grantExpired: 401, .forbidden: 403, .notFound: 404, .notAcceptable: 406, .conflict: 409, .notContinuable: 409,
            .offsetMismatch: 409, .preconditionFailed: 412, .payloadTooLarge: 413, .unsupportedMediaType: 415,
            .rangeNotSatisfiable: 416, .tooManyRequests: 429, .checksumMismatch: 460, .internal: 500, .unavailable: 503,
            .insufficientStorage: 507,
        ]
        for code in ServiceError.Code.allCases {
            let error = ServiceError(code, "m").httpError
            #expect(error.status.code == statuses[code], "\(code)")
            #expect(error.code == code.rawValue)
        }
        #expect(ServiceError(.unauthorized, "m").httpError.headers.contains { $0.name == "WWW-Authenticate" })
        #expect(ServiceError(.grantExpired, "m").httpError.headers.contains { $0.name == "WWW-Authenticate" && $0.value.contains("invalid_token") })
        #expect(ServiceError(.preconditionFailed, "m").httpError.headers.contains { $0.name == "Tus-Version" })
        #expect(ServiceError(.tooManyRequests, "m", retryAfterSeconds: 42).httpError.headers.contains { $0.name == "Retry-After" && $0.value == "42" })
    }
}

/// `Authorization: Bearer <token>` (RFC 6750 §2.1), the scheme in any case (RFC 9110 §11.1).
@Suite(.hangGuard, .testThreads) struct BearerTokenTests {
    @Test(arguments: [("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER  abc ", "abc"), ("Bearer nt_A-b_9", "nt_A-b_9")])
    func theTokenIsWhatFollowsTheScheme(header: String, token: String) {
        #expect(BearerToken.parse(header) == token)
    }

    @Test(arguments: ["Bearer", "Bearer ", "Bearer    ", "Basic abc", "Bearerabc", "Bearxr abc", ""])
    func anythingElseIsNoToken(header: String) {
        #expect(BearerToken.parse(header) == nil)
    }
}
