/// Reads JSON text (RFC 8259) into a `JSONValue`, strictly: one value, surrounded only by
/// whitespace; no duplicate keys; strings valid UTF-8 with valid escapes (surrogates paired);
/// numbers by the grammar; nesting at most `maxDepth`. Every refusal says where and why.
public struct JSONReader {
    public struct Failure: Error, Equatable, Sendable {
        public var message: String
    }

    /// Arrays and objects nested deeper than this are refused by default (a deep nest would
    /// take the stack; no document of the API nests more than six). toursd's is `maxJsonDepth`.
    public static let defaultMaxDepth = 64

    private let bytes: [UInt8]
    private let maxDepth: Int
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(Failure) -> JSONValue {
        var reader = JSONReader(bytes, maxDepth: maxDepth)
        reader.skipWhitespace()
        let value = try reader.value()
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.failure("unexpected text after the value") }
        return value
    }

    public static func parse(_ text: String) throws(Failure) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private func failure(_ what: String) -> Failure {
        Failure(message: "at byte \(index), \(what)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0a || bytes[index] == 0x0d || bytes[index] == 0x09 {
            index += 1
        }
    }

    private mutating func value() throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw failure("the text ends where a value should be") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(Failure) -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("unexpected end") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw failure("unexpected character") }
        index += count
        return value
    }

    private mutating func nest() throws(Failure) {
        depth += 1
        guard depth <= maxDepth else { throw failure("nested deeper than \(maxDepth) levels") }
        index += 1
    }

    private mutating func object() throws(Failure) -> JSONValue {
        try nest()
        var members: [JSONMember] = []
        var keys = SeenKeys()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("an object key must be a string") }
            let key = try string()
            guard keys.insert(key, among: members) else { throw failure("the key \"\(key.prefix(64))\" appears twice") }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("a ':' must follow an object key") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key, try value()))
            skipWhitespace()
            guard index < bytes.count else { throw failure("the object is not closed") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(members)
            } else {
                throw failure("',' or '}' must follow an object member")
            }
        }
    }

    /// The keys of an object being read, so that one given twice is refused: looked for among
    /// its members while they are few, as in most objects (no hashing, no allocation: a tour
    /// document's 200 panoramas each parse their geometry when read), in a set from
    /// `setFrom` members on, so that a large object's reading is not quadratic.
    package struct SeenKeys {
        package static let setFrom = 16
        private var set: Set<String>?

        /// Whether `key` is new to an object holding `members`.
        mutating func insert(_ key: String, among members: [JSONMember]) -> Bool {
            if set != nil { return set!.insert(key).inserted }
            if members.contains(where: { $0.key == key }) { return false }
            if members.count + 1 == Self.setFrom { set = Set(members.map(\.key) + [key]) }
            return true
        }
    }

    private mutating func array() throws(Failure) -> JSONValue {
        try nest()
        var values: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(values)
        }
        while true {
            skipWhitespace()
            values.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw failure("the array is not closed") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(values)
            } else {
                throw failure("',' or ']' must follow an array element")
            }
        }
    }

    /// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a number needs a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw failure("a number must not start with 0") }
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a digit must follow the decimal point") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a digit must follow the exponent") }
            skipDigits()
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1 // the opening quote
        let start = index
        // Most strings have no escape: one validated copy then.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 { index += 1 }
        guard index < bytes.count else { throw failure("the string is not closed") }
        if bytes[index] == UInt8(ascii: "\"") {
            let text = try utf8(bytes[start..<index])
            index += 1
            return text
        }
        var unescaped = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw failure("the string is not closed") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return try utf8(unescaped[...])
            }
            guard byte >= 0x20 else { throw failure("a control character must be escaped in a string") }
            guard byte == UInt8(ascii: "\\") else {
                unescaped.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { throw failure("the string is not closed") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escape)
            case UInt8(ascii: "b"): unescaped.append(0x08)
            case UInt8(ascii: "f"): unescaped.append(0x0c)
            case UInt8(ascii: "n"): unescaped.append(0x0a)
            case UInt8(ascii: "r"): unescaped.append(0x0d)
            case UInt8(ascii: "t"): unescaped.append(0x09)
            case UInt8(ascii: "u"): unescaped.append(contentsOf: try unicodeEscape())
            default: throw failure("an unknown escape in a string")
            }
        }
    }

    /// After `\u`: four hex digits, a surrogate pair written as two escapes; as UTF-8.
    private mutating func unicodeEscape() throws(Failure) -> [UInt8] {
        var scalar = try hex4()
        if (0xd800...0xdbff).contains(scalar) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("a high surrogate must be followed by a low one")
            }
            index += 2
            let low = try hex4()
            guard (0xdc00...0xdfff).contains(low) else { throw failure("a high surrogate must be followed by a low one") }
            scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
        } else if (0xdc00...0xdfff).contains(scalar) {
            throw failure("a low surrogate without a high one")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw failure("not a Unicode scalar") }
        return Array(String(Character(unicode)).utf8)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("\\u needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("\\u needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func utf8(_ slice: ArraySlice<UInt8>) throws(Failure) -> String {
        guard let text = String(validating: slice, as: UTF8.self) else { throw failure("a string is not valid UTF-8") }
        return text
    }
}
