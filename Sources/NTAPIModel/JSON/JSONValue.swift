/// A JSON value (RFC 8259) as our reader reads it: objects keep their members in order,
/// numbers keep their literal text (no value is rounded on its way through).
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal, as it came (grammar-checked).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    /// The member named `key` of an object (nil when absent, or when this is no object).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var isNull: Bool { self == .null }

    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// A number's value as a Double, when finite.
    public var double: Double? {
        guard case .number(let text) = self, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// A number that is an integer (2 and 2.0 alike).
    public var integer: Int? {
        guard case .number(let text) = self else { return nil }
        if let value = Int(text) { return value }
        return double.flatMap { Int(exactly: $0) }
    }

    public var array: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    /// The string members of an object (metadata); others are left out.
    public var stringMap: [String: String] {
        var strings: [String: String] = [:]
        for member in members ?? [] { if let text = member.value.string { strings[member.key] = text } }
        return strings
    }

    public var members: [JSONMember]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// Canonical text: keys sorted by their UTF-8 bytes, no whitespace, numbers normalized
    /// (`JSONWriter.value`). Equal values (members in any order) give equal bytes.
    public var canonicalBytes: [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }

    public var canonicalText: String { String(decoding: canonicalBytes, as: UTF8.self) }

    /// Compact text for an opaque value that is stored and given back: keys sorted, no
    /// whitespace, and every number's literal exactly as it came (a Double would turn
    /// 18446744073709551615 into 1.8446744073709552e+19 and -0.0 into 0).
    public var compactText: String {
        var writer = JSONWriter()
        writer.value(self, numbers: .asSent)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

public struct JSONMember: Equatable, Sendable {
    public var key: String
    public var value: JSONValue

    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}
