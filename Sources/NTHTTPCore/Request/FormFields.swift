/// The fields of an `application/x-www-form-urlencoded` body (WHATWG URL §5): what an HTML
/// form posts. A malformed escape or a field given twice is refused, as in a query.
public struct FormFields: Sendable, Equatable {
    public private(set) var values: [String: String] = [:]

    public init(_ body: [UInt8]) throws(HTTPError) {
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = percentDecode(Substring(decoding: parts[0], as: UTF8.self)),
                  let value = parts.count > 1 ? percentDecode(Substring(decoding: parts[1], as: UTF8.self)) : "" else {
                throw .badRequest("malformed percent-encoding in the form")
            }
            guard values[key] == nil else { throw .badRequest("form field \(key) is given more than once") }
            values[key] = value
        }
    }

    public subscript(name: String) -> String? { values[name] }
}

/// The cookies a request carries (`Cookie: a=b; c=d`, RFC 6265 §5.4). A name given twice
/// keeps its first value, as browsers send the most specific first.
public struct Cookies: Sendable, Equatable {
    public private(set) var values: [String: String] = [:]

    public init(_ header: String?) {
        guard let header else { return }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let name = parts[0].trimmingSpaces
            guard !name.isEmpty, values[name] == nil else { continue }
            values[name] = parts[1].trimmingSpaces
        }
    }

    public subscript(name: String) -> String? { values[name] }
}

/// A `Set-Cookie` field (RFC 6265 §4.1). `maxAge` 0 removes the cookie.
public struct SetCookie: Sendable, Equatable {
    public var name: String
    public var value: String
    public var path = "/"
    public var maxAge: Int
    public var secure: Bool
    public var httpOnly = true
    public var sameSiteStrict = true

    public init(name: String, value: String, path: String = "/", maxAge: Int, secure: Bool) {
        self.name = name
        self.value = value
        self.path = path
        self.maxAge = maxAge
        self.secure = secure
    }

    public var field: HTTPField {
        var text = "\(name)=\(value); Path=\(path); Max-Age=\(maxAge)"
        if httpOnly { text += "; HttpOnly" }
        if sameSiteStrict { text += "; SameSite=Strict" }
        if secure { text += "; Secure" }
        return HTTPField(name: "Set-Cookie", value: text)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
