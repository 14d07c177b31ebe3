import NTHashing

/// A URL that lets whoever holds it GET one object for a while, without credentials: AWS
/// Signature V4 in the query string (host the only signed header, the payload unsigned), as
/// the AWS SDKs presign. Pure: the time is given.
public enum PresignedURL {
    /// `key` below the bucket's prefix; `seconds` its lifetime (1 s to 7 days); `now` seconds
    /// since 1970.
    public static func get(_ key: String, settings: BucketSettings, seconds: Int, now: Int64) -> String {
        let (date, stamp) = timestamps(now)
        let scope = "\(date)/\(settings.region)/s3/aws4_request"
        var query = [("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", "\(settings.credentials.accessKey)/\(scope)"),
                     ("X-Amz-Date", stamp), ("X-Amz-Expires", String(seconds)), ("X-Amz-SignedHeaders", "host")]
        if let token = settings.credentials.sessionToken { query.append(("X-Amz-Security-Token", token)) }
        query.sort { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
        let url = settings.url(key: key, query: query)
        // The URL's parts as they are signed: its path and query (already AWS-encoded) and host.
        let afterScheme = url.drop { $0 != "/" }.dropFirst(2)
        let host = afterScheme.prefix { $0 != "/" }
        let pathAndQuery = afterScheme.dropFirst(host.count)
        let path = pathAndQuery.prefix { $0 != "?" }
        let canonicalQuery = pathAndQuery.dropFirst(path.count + 1)
        let canonical = "GET\n\(path)\n\(canonicalQuery)\nhost:\(host)\n\nhost\nUNSIGNED-PAYLOAD"
        let toSign = "AWS4-HMAC-SHA256\n\(stamp)\n\(scope)\n" + ByteEncoding.hex(StreamingDigest.hash(.sha256, Array(canonical.utf8)))
        var signingKey = Array("AWS4\(settings.credentials.secretKey)".utf8)
        for part in [date, settings.region, "s3", "aws4_request"] { signingKey = hmacSHA256(key: signingKey, Array(part.utf8)) }
        return url + "&X-Amz-Signature=" + ByteEncoding.hex(hmacSHA256(key: signingKey, Array(toSign.utf8)))
    }

    /// `20130524` and `20130524T000000Z` for a time.
    static func timestamps(_ seconds: Int64) -> (date: String, stamp: String) {
        let days = seconds / 86400, second = seconds % 86400
        // The civil date from days since 1970 (Howard Hinnant's algorithm).
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let date = "\(year)\(two(month))\(two(day))"
        return (date, "\(date)T\(two(second / 3600))\(two(second / 60 % 60))\(two(second % 60))Z")
    }
}
