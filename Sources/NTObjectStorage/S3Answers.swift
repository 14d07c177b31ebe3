import Foundation

/// The few XML documents S3 answers with, read by a scanner of their flat shape: elements by
/// name, one level of repeated blocks (`<Part>`, `<Contents>`, `<Upload>`), entities decoded.
/// No general XML: S3's answers have no mixed content, comments or CDATA that matter here.
struct S3XML {
    let text: Substring

    init(_ bytes: [UInt8]) { text = Substring(String(decoding: bytes, as: UTF8.self)) }
    init(_ text: Substring) { self.text = text }

    /// The decoded text of the first `<name>` element, or nil.
    func value(_ name: String) -> String? {
        blocks(name).first.map { Self.decode($0.text) }
    }

    /// Every `<name>…</name>` element, in order, as documents of their own.
    func blocks(_ name: String) -> [S3XML] {
        var found: [S3XML] = []
        var rest = text[...]
        let close = "</\(name)>"
        while let open = rest.range(of: "<\(name)") {
            let after = rest[open.upperBound...]
            guard let next = after.first else { break }
            if next == "/" && after.hasPrefix("/>") { // an empty element: <Name/>
                found.append(S3XML(after[after.startIndex..<after.startIndex]))
                rest = after.dropFirst(2)
                continue
            }
            guard next == ">" || next == " ", let end = after.firstIndex(of: ">") else { rest = after; continue }
            let body = after[after.index(after: end)...]
            guard let closing = body.range(of: close) else { break }
            found.append(S3XML(body[..<closing.lowerBound]))
            rest = body[closing.upperBound...]
        }
        return found
    }

    /// The five predefined entities and numeric references.
    static func decode(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var out = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let tail = rest[amp...]
            guard let semi = tail.firstIndex(of: ";"), tail.distance(from: amp, to: semi) <= 10 else {
                out += "&"; rest = tail.dropFirst(); continue
            }
            let entity = tail[tail.index(after: amp)..<semi]
            switch entity {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let scalar: Unicode.Scalar?
                if entity.hasPrefix("#x") { scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init) } else if entity.hasPrefix("#") { scalar = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init) } else { scalar = nil }
                if let scalar { out.unicodeScalars.append(scalar) } else { out += tail[amp...semi] }
            }
            rest = tail[tail.index(after: semi)...]
        }
        return out + rest
    }
}

/// An object as a listing or a HEAD tells it.
public struct ObjectSummary: Sendable, Equatable {
    /// Below the bucket's prefix.
    public var key: String
    public var size: Int64
    /// Seconds since 1970.
    public var lastModified: Int64

    public init(key: String, size: Int64, lastModified: Int64) {
        self.key = key
        self.size = size
        self.lastModified = lastModified
    }
}

/// A part of a multipart upload: what its completion names.
public struct UploadedPart: Sendable, Equatable {
    public var number: Int
    public var etag: String
    public var size: Int64

    public init(number: Int, etag: String, size: Int64) {
        self.number = number
        self.etag = etag
        self.size = size
    }
}

/// A multipart upload in progress.
public struct MultipartUpload: Sendable, Equatable {
    /// Below the bucket's prefix.
    public var key: String
    public var uploadId: String
    /// Seconds since 1970 (moto dates every upload 2010-11-10).
    public var initiated: Int64

    public init(key: String, uploadId: String, initiated: Int64) {
        self.key = key
        self.uploadId = uploadId
        self.initiated = initiated
    }
}

/// One page of a listing: its entries, and where the next begins (nil: the last page).
struct ListingPage<Entry> {
    var entries: [Entry]
    var next: String?
}

/// Reading S3's answers.
enum S3Answers {
    static func uploadId(_ body: [UInt8]) -> String? {
        S3XML(body).value("UploadId").flatMap { $0.isEmpty ? nil : $0 }
    }

    /// ListObjectsV2; keys are given below `prefix`.
    static func objects(_ body: [UInt8], below prefix: String) -> ListingPage<ObjectSummary> {
        let xml = S3XML(body)
        let entries = xml.blocks("Contents").compactMap { entry -> ObjectSummary? in
            guard let key = entry.value("Key"), key.hasPrefix(prefix), let size = entry.value("Size").flatMap({ Int64($0) }) else { return nil }
            return ObjectSummary(key: String(key.dropFirst(prefix.count)), size: size, lastModified: entry.value("LastModified").flatMap(isoSeconds) ?? 0)
        }
        return ListingPage(entries: entries, next: xml.value("IsTruncated") == "true" ? xml.value("NextContinuationToken") : nil)
    }

    /// ListMultipartUploads; the next page is named by both markers, joined by a newline.
    static func uploads(_ body: [UInt8], below prefix: String) -> ListingPage<MultipartUpload> {
        let xml = S3XML(body)
        let entries = xml.blocks("Upload").compactMap { upload -> MultipartUpload? in
            guard let key = upload.value("Key"), key.hasPrefix(prefix), let id = upload.value("UploadId") else { return nil }
            return MultipartUpload(key: String(key.dropFirst(prefix.count)), uploadId: id, initiated: upload.value("Initiated").flatMap(isoSeconds) ?? 0)
        }
        guard xml.value("IsTruncated") == "true", let key = xml.value("NextKeyMarker") else { return ListingPage(entries: entries, next: nil) }
        return ListingPage(entries: entries, next: key + "\n" + (xml.value("NextUploadIdMarker") ?? ""))
    }

    /// An `<Error>` document's code and message (S3 may answer 200 with one to a completion).
    static func error(_ body: [UInt8]) -> (code: String, message: String)? {
        let xml = S3XML(body)
        guard let error = xml.blocks("Error").first else { return nil }
        return (error.value("Code") ?? "", error.value("Message") ?? "")
    }

    /// The CompleteMultipartUpload request's document.
    static func completion(_ parts: [UploadedPart]) -> [UInt8] {
        var xml = "<CompleteMultipartUpload>"
        for part in parts.sorted(by: { $0.number < $1.number }) {
            let etag = part.etag.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(etag)</ETag></Part>"
        }
        return Array((xml + "</CompleteMultipartUpload>").utf8)
    }

    /// `2010-11-10T20:48:33.000Z` as seconds since 1970.
    static func isoSeconds(_ text: String) -> Int64? {
        let digits = Array(text.utf8)
        guard digits.count >= 19, digits[4] == UInt8(ascii: "-"), digits[10] == UInt8(ascii: "T") else { return nil }
        func number(_ from: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for byte in digits[from..<(from + count)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2), let second = number(17, 2), (1...12).contains(month), (1...31).contains(day) else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146097 + dayOfEra - 719468
        return days * 86400 + hour * 3600 + minute * 60 + second
    }
}
