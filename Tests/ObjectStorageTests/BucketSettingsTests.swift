import Testing
@testable import NTObjectStorage

@Suite struct BucketSettingsTests {
    let keys = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "SECRET"]

    func resolve(_ store: String, endpoint: String = "", region: String = "", pathStyle: Bool = false,
                 _ environment: [String: String] = [:]) throws -> BucketSettings? {
        try BucketSettings.resolve(blobStore: store, endpoint: endpoint, region: region, pathStyle: pathStyle,
                                   environment: keys.merging(environment) { $1 })
    }

    @Test func theDirectoryStoreNamesNoBucket() throws {
        #expect(try resolve("") == nil)
        #expect(try resolve("directory") == nil)
    }

    @Test func bucketAndPrefixComeFromTheURL() throws {
        let plain = try #require(try resolve("s3://tours"))
        #expect(plain.bucket == "tours" && plain.prefix == "")
        let prefixed = try #require(try resolve("s3://tours//eu/prod/"))
        #expect(prefixed.prefix == "eu/prod/")
        #expect(prefixed.url(key: "1/panoramas/a") == "https://tours.s3.us-east-1.amazonaws.com/eu/prod/1/panoramas/a")
    }

    @Test func theEndpointFollowsTheAWSOrder() throws {
        let config = "http://10.0.0.5:9000"
        #expect(try resolve("s3://b-1", endpoint: config)?.endpoint == config)
        #expect(try resolve("s3://b-1", endpoint: config, ["AWS_ENDPOINT_URL": "http://general:1"])?.endpoint == "http://general:1")
        #expect(try resolve("s3://b-1", endpoint: config, ["AWS_ENDPOINT_URL": "http://general:1", "AWS_ENDPOINT_URL_S3": "http://s3only:2/"])?.endpoint == "http://s3only:2")
        #expect(try resolve("s3://b-1", region: "eu-west-3")?.endpoint == "https://s3.eu-west-3.amazonaws.com")
        #expect(try resolve("s3://b-1", region: "eu-west-3", ["AWS_REGION": "ap-south-1"])?.region == "ap-south-1")
        #expect(try resolve("s3://b-1")?.region == "us-east-1")
        #expect(try resolve("s3://b-1", ["AWS_SESSION_TOKEN": "T"])?.credentials == BucketCredentials(accessKey: "AKID", secretKey: "SECRET", sessionToken: "T"))
    }

    @Test func addressesArePathStyle() throws {
        let ip = try #require(try resolve("s3://tours/p", endpoint: "http://127.0.0.1:9000"))
        #expect(ip.pathStyle)
        #expect(ip.url(key: "k", query: [("partNumber", "1"), ("uploadId", "a/b=")]) == "http://127.0.0.1:9000/tours/p/k?partNumber=1&uploadId=a%2Fb%3D")
        #expect(ip.bucketURL(query: [("list-type", "2")]) == "http://127.0.0.1:9000/tours?list-type=2")
        #expect(try resolve("s3://tours", endpoint: "http://[::1]:9000")?.pathStyle == true)
        let named = try #require(try resolve("s3://tours", endpoint: "https://minio.example:9000"))
        #expect(!named.pathStyle)
        #expect(named.url(key: "k") == "https://tours.minio.example:9000/k")
        #expect(named.bucketURL(query: [("uploads", "")]) == "https://tours.minio.example:9000/?uploads=")
        #expect(try resolve("s3://tours", endpoint: "https://minio.example", pathStyle: true)?.url(key: "k") == "https://minio.example/tours/k")
    }

    @Test func keysAreEncodedAsSigV4SignsThem() {
        #expect(URIEncoding.encode("a b/ü~*", keepingSlashes: true) == "a%20b/%C3%BC~%2A")
        #expect(URIEncoding.encode("a/b", keepingSlashes: false) == "a%2Fb")
    }

    @Test func mistakesAreSaidClearly() throws {
        for (store, words) in [("s3:/x", "must be"), ("file:///x", "must be"), ("s3://UPPER", "not a bucket name"), ("s3://ab", "not a bucket name"),
                               ("s3://tours/../x", "\"..\""), ("s3://-tours", "not a bucket name")] {
            #expect { _ = try resolve(store) } throws: { "\($0)".contains(words) }
        }
        #expect { _ = try resolve("s3://tours", endpoint: "ftp://x") } throws: { "\($0)".contains("not an http") }
        #expect { _ = try resolve("s3://tours", endpoint: "http://x/path") } throws: { "\($0)".contains("not an http") }
        #expect {
            _ = try BucketSettings.resolve(blobStore: "s3://tours", endpoint: "", region: "", pathStyle: false, environment: ["AWS_ACCESS_KEY_ID": "A"])
        } throws: { "\($0)".contains("AWS_SECRET_ACCESS_KEY") }
    }
}
