/// Request methods the server routes; anything else is `.other` (answered 405 or 501).
public enum HTTPMethod: Sendable, Equatable, Hashable, CaseIterable {
    case get, head, post, put, patch, delete, options, other

    public var name: String {
        switch self {
        case .get: return "GET"
        case .head: return "HEAD"
        case .post: return "POST"
        case .put: return "PUT"
        case .patch: return "PATCH"
        case .delete: return "DELETE"
        case .options: return "OPTIONS"
        case .other: return "OTHER"
        }
    }

    /// Methods are case-sensitive (RFC 9110 §9.1).
    init(bytes: UnsafeRawBufferPointer) {
        switch bytes.count {
        case 3:
            if Self.equal(bytes, "GET") { self = .get } else if Self.equal(bytes, "PUT") { self = .put } else { self = .other }
        case 4:
            if Self.equal(bytes, "HEAD") { self = .head } else if Self.equal(bytes, "POST") { self = .post } else { self = .other }
        case 5: self = Self.equal(bytes, "PATCH") ? .patch : .other
        case 6: self = Self.equal(bytes, "DELETE") ? .delete : .other
        case 7: self = Self.equal(bytes, "OPTIONS") ? .options : .other
        default: self = .other
        }
    }

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        name.withUTF8Buffer { $0.elementsEqual(bytes) }
    }
}

public enum HTTPVersion: Sendable, Equatable {
    case http10
    case http11
}

/// How the request body is delimited (RFC 9112 §6.3).
public enum BodyFraming: Sendable, Equatable {
    case none
    case length(Int64)
    case chunked

    public var hasBody: Bool {
        switch self {
        case .none, .length(0): return false
        default: return true
        }
    }
}

/// The bytes of a request head and where each header field lies in them. The connection
/// reuses one storage for request after request when no one else holds it, so a parsed head
/// costs a copy into an existing buffer, not an allocation.
public final class RequestHeadStorage: @unchecked Sendable {
    // Written only by the decoder before the head is handed out; read-only afterwards.
    var bytes: [UInt8] = []
    var fields: [FieldRange] = []

    public init() {}

    struct FieldRange {
        var name: Range<Int>
        var value: Range<Int>
    }
}

/// The request line and header fields of one request, parsed.
public struct RequestHead: Sendable {
    public let method: HTTPMethod
    public let version: HTTPVersion
    /// The path of the target, as sent (not percent-decoded).
    public let path: String
    /// The query after `?`, or nil.
    public let query: String?
    public let framing: BodyFraming
    /// Whether the connection may serve another request after this one.
    public let keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request.
    public let expectsContinue: Bool
    public let headers: HTTPHeaders
    let methodRange: Range<Int>

    /// The method as sent, also when it is not one the server knows.
    public var methodName: String {
        headers.storage.bytes.withUnsafeBytes { String(decoding: $0[methodRange], as: UTF8.self) }
    }

    /// The value of a query parameter (`a=b&c=d`), percent-decoded; nil when absent. A
    /// malformed escape anywhere in the query, or the parameter given twice, is a 400: a
    /// request that says two things, or nothing readable, is not guessed at.
    public func queryParameter(_ name: String) throws(HTTPError) -> String? {
        guard let query else { return nil }
        var found: String?
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = percentDecode(parts[0]), let value = parts.count > 1 ? percentDecode(parts[1]) : "" else {
                throw .badRequest("malformed percent-encoding in the query")
            }
            guard key == name else { continue }
            guard found == nil else { throw .badRequest("query parameter \(name) is given more than once") }
            found = value
        }
        return found
    }

    /// The Content-Length, when the body is delimited by one.
    public var contentLength: Int64? {
        if case .length(let length) = framing { return length }
        return nil
    }
}

/// Read-only view of the header fields of a request head. Names compare case-insensitively
/// (RFC 9110 §5.1); a field may repeat.
public struct HTTPHeaders: Sendable, Sequence {
    let storage: RequestHeadStorage

    public var count: Int { storage.fields.count }

    /// The first value of the named field.
    public subscript(_ name: String) -> String? {
        first(name)
    }

    public func first(_ name: String) -> String? {
        for field in storage.fields where matches(field, name) {
            return value(field)
        }
        return nil
    }

    /// Every value of the named field, in order.
    public func values(_ name: String) -> [String] {
        storage.fields.filter { matches($0, name) }.map(value)
    }

    public func contains(_ name: String) -> Bool {
        storage.fields.contains { matches($0, name) }
    }

    public func makeIterator() -> AnyIterator<(name: String, value: String)> {
        var index = 0
        return AnyIterator {
            guard index < storage.fields.count else { return nil }
            let field = storage.fields[index]
            index += 1
            return storage.bytes.withUnsafeBytes {
                (String(decoding: $0[field.name], as: UTF8.self), String(decoding: $0[field.value], as: UTF8.self))
            }
        }
    }

    /// Calls `body` with the raw bytes of the first value of the named field, without
    /// building a String.
    func withFirstValueBytes<R>(_ name: StaticString, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        storage.bytes.withUnsafeBytes { bytes in
            for field in storage.fields where name.withUTF8Buffer({ Self.equalIgnoringCase(bytes[field.name], $0) }) {
                return body(UnsafeRawBufferPointer(rebasing: bytes[field.value]))
            }
            return nil
        }
    }

    private func matches(_ field: RequestHeadStorage.FieldRange, _ name: String) -> Bool {
        var name = name
        return name.withUTF8 { nameBytes in
            storage.bytes.withUnsafeBytes { Self.equalIgnoringCase($0[field.name], nameBytes) }
        }
    }

    private func value(_ field: RequestHeadStorage.FieldRange) -> String {
        storage.bytes.withUnsafeBytes { String(decoding: $0[field.value], as: UTF8.self) }
    }

    static func equalIgnoringCase(_ a: Slice<UnsafeRawBufferPointer>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var ia = a.startIndex
        for cb in b {
            if asciiLower(a[ia]) != asciiLower(cb) { return false }
            ia += 1
        }
        return true
    }
}

@inline(__always)
func asciiLower(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
}
