import Foundation

/// Where a bucket is and how to reach it: `blobStore: "s3://BUCKET/PREFIX"` with the AWS
/// conventions for the rest (endpoint, region and credentials from the environment, so an
/// operator's existing set-up works), resolved once at start-up by a pure function.
public struct BucketSettings: Sendable, Equatable {
    public var bucket: String
    /// Prepended to every key: empty, or ending in "/".
    public var prefix: String
    /// `scheme://host[:port]`, no trailing slash.
    public var endpoint: String
    public var region: String
    /// `https://endpoint/BUCKET/key` rather than `https://BUCKET.endpoint/key`.
    public var pathStyle: Bool
    public var credentials: BucketCredentials
    /// Where `endpoint` came from: `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, `s3Endpoint`, or
    /// AWS's own (what check-config says beside it).
    public var endpointSource = "s3Endpoint"

    public init(bucket: String, prefix: String = "", endpoint: String, region: String = "us-east-1", pathStyle: Bool,
                credentials: BucketCredentials) {
        self.bucket = bucket
        self.prefix = prefix
        self.endpoint = endpoint
        self.region = region
        self.pathStyle = pathStyle
        self.credentials = credentials
    }

    /// The settings `blobStore` names, or nil when it names the directory store (empty or
    /// `"directory"`). The endpoint is `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`, else
    /// `endpoint` (the config's `s3Endpoint`), else AWS's own for the region; the region is
    /// `AWS_REGION`, else `region`, else us-east-1. Path-style addressing when the endpoint's
    /// host is an IP address (no bucket name can go before it) or `pathStyle`.
    public static func resolve(blobStore: String, endpoint: String, region: String, pathStyle: Bool,
                               environment: [String: String]) throws(BucketSettingsError) -> BucketSettings? {
        guard !blobStore.isEmpty, blobStore != "directory" else { return nil }
        guard blobStore.hasPrefix("s3://") else {
            throw BucketSettingsError("blobStore must be \"directory\" or \"s3://BUCKET/PREFIX\", not \"\(blobStore)\"")
        }
        let path = blobStore.dropFirst(5)
        let bucket = String(path.prefix { $0 != "/" })
        guard isBucketName(bucket) else {
            throw BucketSettingsError("\"\(bucket)\" in blobStore is not a bucket name (3 to 63 of a-z, 0-9, '.' and '-')")
        }
        let segments = path.dropFirst(bucket.count).split(separator: "/")
        guard segments.allSatisfy({ $0 != "." && $0 != ".." && $0.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7f } }) else {
            throw BucketSettingsError("the prefix in blobStore may not hold \".\", \"..\" or control characters")
        }
        let prefix = segments.isEmpty ? "" : segments.joined(separator: "/") + "/"
        let value = { (name: String) in environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let region = value("AWS_REGION") ?? (region.isEmpty ? "us-east-1" : region)
        let (chosen, source) = if let named = value("AWS_ENDPOINT_URL_S3") { (named, "AWS_ENDPOINT_URL_S3") }
            else if let named = value("AWS_ENDPOINT_URL") { (named, "AWS_ENDPOINT_URL") }
            else if endpoint.isEmpty { ("https://s3.\(region).amazonaws.com", "AWS's own, for the region") }
            else { (endpoint, "s3Endpoint") }
        var endpoint = chosen
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        guard let host = Self.host(of: endpoint) else {
            throw BucketSettingsError("the S3 endpoint \"\(endpoint)\" is not an http:// or https:// URL without a path")
        }
        guard let access = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") else {
            throw BucketSettingsError("blobStore \(blobStore) needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
        }
        let credentials = BucketCredentials(accessKey: access, secretKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
        var settings = BucketSettings(bucket: bucket, prefix: prefix, endpoint: endpoint, region: region,
                                      pathStyle: pathStyle || isAddress(host) || bucket.contains("."), credentials: credentials)
        settings.endpointSource = source
        return settings
    }

    /// The URL of `key` (below the prefix), with `query` in the order given (sorted by name:
    /// the canonical order SigV4 signs).
    public func url(key: String, query: [(name: String, value: String)] = []) -> String {
        let path = URIEncoding.encode(prefix + key, keepingSlashes: true)
        var url: String
        if pathStyle {
            url = "\(endpoint)/\(bucket)/\(path)"
        } else {
            let scheme = endpoint.hasPrefix("https://") ? "https://" : "http://"
            url = "\(scheme)\(bucket).\(endpoint.dropFirst(scheme.count))/\(path)"
        }
        if !query.isEmpty {
            url += "?" + query.map { "\(URIEncoding.encode($0.name, keepingSlashes: false))=\(URIEncoding.encode($0.value, keepingSlashes: false))" }
                .joined(separator: "&")
        }
        return url
    }

    /// The bucket's own URL (listings), with `query` as `url` takes it.
    public func bucketURL(query: [(name: String, value: String)] = []) -> String {
        var bucketOnly = self
        bucketOnly.prefix = ""
        let url = bucketOnly.url(key: "", query: query)
        // Path-style: "/BUCKET", not "/BUCKET/" (that would name an empty key).
        guard pathStyle, let slash = url.range(of: "/\(bucket)/") else { return url }
        return url.replacingCharacters(in: slash, with: "/\(bucket)")
    }

    /// The host of an `http(s)://host[:port]` URL without a path, or nil.
    static func host(of endpoint: String) -> String? {
        let rest: Substring
        if endpoint.hasPrefix("https://") { rest = endpoint.dropFirst(8) } else if endpoint.hasPrefix("http://") { rest = endpoint.dropFirst(7) } else { return nil }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("@") else { return nil }
        if rest.hasPrefix("[") { return rest.firstIndex(of: "]").map { String(rest[rest.startIndex...$0]) } }
        return String(rest.prefix { $0 != ":" })
    }

    static func isAddress(_ host: String) -> Bool {
        if host.hasPrefix("[") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }

    static func isBucketName(_ name: String) -> Bool {
        (3...63).contains(name.utf8.count)
            && name.utf8.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2e || $0 == 0x2d }
            && name.first != "." && name.first != "-" && name.last != "." && name.last != "-"
    }
}

/// An access key, its secret and, for temporary credentials, the session token.
public struct BucketCredentials: Sendable, Equatable {
    public var accessKey: String
    public var secretKey: String
    public var sessionToken: String?

    public init(accessKey: String, secretKey: String, sessionToken: String? = nil) {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
    }
}

/// Why `blobStore` and its settings cannot name a bucket.
public struct BucketSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// AWS's URI encoding (SigV4): every byte but the unreserved A–Z a–z 0–9 - . _ ~ as %XX, and
/// '/' kept in paths.
enum URIEncoding {
    static func encode(_ text: String, keepingSlashes: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                out.append("/")
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(digits[Int(byte >> 4)])
                out.unicodeScalars.append(digits[Int(byte & 15)])
            }
        }
        return out
    }
}
