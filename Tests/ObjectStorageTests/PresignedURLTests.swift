import Testing
import Foundation
import TestSupport
@testable import NTObjectStorage

@Suite struct PresignedURLTests {
    /// AWS's own example (Authenticating Requests: Using Query Parameters, Signature V4).
    @Test func theAWSExampleIsSignedAsAWSSignsIt() {
        let settings = BucketSettings(bucket: "examplebucket", endpoint: "https://s3.amazonaws.com", pathStyle: false,
                                      credentials: BucketCredentials(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"))
        let url = PresignedURL.get("test.txt", settings: settings, seconds: 86400, now: 1_369_353_600)
        #expect(url == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z"
                + "&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }

    @Test func timestampsAreUTC() {
        #expect(PresignedURL.timestamps(0) == ("19700101", "19700101T000000Z"))
        #expect(PresignedURL.timestamps(951_825_600 + 3661) == ("20000229", "20000229T130101Z"))
    }

    /// rclone checks the signature: the URL reads the object without credentials, and not
    /// once changed.
    @Test func aStoreGivesTheObjectToTheURLAlone() async throws {
        let server = try S3Server(.rclone)
        defer { server.stop() }
        let bucket = try await ObjectBucketTests.bucket(on: server)
        try await bucket.run { try $0.put("1/panoramas/p", .bytes(Array("pano".utf8)), contentType: "image/jpeg") }
        let url = PresignedURL.get("1/panoramas/p", settings: bucket.settings, seconds: 60, now: Int64(Date().timeIntervalSince1970))
        let fetched = try runCommand("/usr/bin/curl", ["-s", "-w", " %{http_code}", url])
        #expect(fetched.out == "pano 200", "\(fetched.out)")
        let tampered = try runCommand("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", url.replacingOccurrences(of: "panoramas/p", with: "panoramas/q")])
        #expect(tampered.out == "403")
    }
}
