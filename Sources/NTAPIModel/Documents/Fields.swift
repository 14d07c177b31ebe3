/// A request body or a document the API refused: the 400 message (or, for a client reading
/// an answer, what the server got wrong).
public struct InvalidDocument: Error, Equatable, Sendable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }
}

/// Reads the fields of a JSON object strictly: each accessor names the field and what was
/// wrong with it, so a 400 tells the client exactly what to fix.
public struct Fields {
    public let members: [JSONMember]
    /// What the object is, for messages ("body", "rooms[2]").
    public let context: String

    public init(_ value: JSONValue, context: String) throws(InvalidDocument) {
        guard let members = value.members else { throw InvalidDocument("the \(context) must be a JSON object") }
        self.members = members
        self.context = context
    }

    /// Parses a body that must be one JSON object.
    public static func parse(_ bytes: [UInt8], context: String = "body", maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> Fields {
        try Fields(try value(bytes, context: context, maxDepth: maxDepth), context: context)
    }

    /// Reads a body's JSON, or says why it is not JSON.
    public static func value(_ bytes: [UInt8], context: String = "body", maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> JSONValue {
        do {
            return try JSONReader.parse(bytes, maxDepth: maxDepth)
        } catch {
            throw InvalidDocument("the \(context) is not valid JSON: \(error.message)")
        }
    }

    public subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    public func string(_ key: String) throws(InvalidDocument) -> String {
        guard let value = self[key] else { throw InvalidDocument("missing field \(key)") }
        guard let string = value.string else { throw InvalidDocument("\(key) must be a string") }
        return string
    }

    /// A string, or nil when absent or null.
    public func optionalString(_ key: String) throws(InvalidDocument) -> String? {
        guard let value = self[key], !value.isNull else { return nil }
        guard let string = value.string else { throw InvalidDocument("\(key) must be a string or null") }
        return string
    }

    public func integer(_ key: String) throws(InvalidDocument) -> Int {
        guard let value = self[key] else { throw InvalidDocument("missing field \(key)") }
        guard let integer = value.integer else { throw InvalidDocument("\(key) must be an integer") }
        return integer
    }

    /// A number, or nil when absent or null.
    public func optionalNumber(_ key: String) throws(InvalidDocument) -> Double? {
        guard let value = self[key], !value.isNull else { return nil }
        guard let number = value.double else { throw InvalidDocument("\(key) must be a number or null") }
        return number
    }

    public func bool(_ key: String) throws(InvalidDocument) -> Bool {
        guard case .bool(let flag)? = self[key] else { throw InvalidDocument("\(key) must be true or false") }
        return flag
    }

    /// A flag, or nil when absent or null.
    public func optionalBool(_ key: String) throws(InvalidDocument) -> Bool? {
        guard let value = self[key], !value.isNull else { return nil }
        return try bool(key)
    }

    /// An object, or nil when absent or null.
    public func object(_ key: String) throws(InvalidDocument) -> Fields? {
        guard let value = self[key], !value.isNull else { return nil }
        guard value.members != nil else { throw InvalidDocument("\(key) must be an object") }
        return try Fields(value, context: key)
    }

    public func array(_ key: String) throws(InvalidDocument) -> [JSONValue] {
        guard let value = self[key] else { throw InvalidDocument("missing field \(key)") }
        guard let array = value.array else { throw InvalidDocument("\(key) must be an array") }
        return array
    }

    /// Any JSON value, as compact text with its numbers as sent (`JSONValue.compactText`);
    /// nil when absent or null.
    public func canonical(_ key: String) -> String? {
        guard let value = self[key], !value.isNull else { return nil }
        return value.compactText
    }

    /// A string-to-string object (metadata), or nil when absent or null.
    public func strings(_ key: String) throws(InvalidDocument) -> [String: String]? {
        guard let object = try object(key) else { return nil }
        var strings: [String: String] = [:]
        for member in object.members {
            guard let value = member.value.string else { throw InvalidDocument("\(key).\(member.key) must be a string") }
            strings[member.key] = value
        }
        return strings
    }
}

/// Client-made ids are UUIDs in lowercase canonical text (docs/api.md "Principles").
public enum Identifier {
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            switch index {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return false }
            default:
                guard (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) else {
                    return false
                }
            }
        }
        return true
    }

    /// The id, or the 400 message naming the field.
    public static func validated(_ text: String?, _ field: String) throws(InvalidDocument) -> String {
        guard let text else { throw InvalidDocument("missing \(field)") }
        guard isValid(text) else { throw InvalidDocument("\(field) must be a lowercase UUID, got \"\(text.prefix(64))\"") }
        return text
    }
}
