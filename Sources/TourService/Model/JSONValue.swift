import Foundation

/// Reading client JSON strictly: each accessor names the field and what was wrong with it, so
/// a 400 tells the client exactly what to fix.
struct JSONObject {
    let values: [String: Any]
    let context: String

    /// Parses a request body that must be a JSON object.
    static func parse(_ bytes: [UInt8], context: String = "body") throws(ServiceError) -> JSONObject {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            throw .badRequest("the \(context) is not valid JSON")
        }
        guard let values = object as? [String: Any] else { throw .badRequest("the \(context) must be a JSON object") }
        return JSONObject(values: values, context: context)
    }

    func has(_ key: String) -> Bool { values[key] != nil }

    func isNull(_ key: String) -> Bool { values[key] is NSNull }

    func string(_ key: String) throws(ServiceError) -> String {
        guard let value = values[key] else { throw .badRequest("missing field \(key)") }
        guard let string = value as? String else { throw .badRequest("\(key) must be a string") }
        return string
    }

    /// A string, or nil when absent or null.
    func optionalString(_ key: String) throws(ServiceError) -> String? {
        guard let value = values[key], !(value is NSNull) else { return nil }
        guard let string = value as? String else { throw .badRequest("\(key) must be a string or null") }
        return string
    }

    func integer(_ key: String) throws(ServiceError) -> Int {
        guard let value = values[key] else { throw .badRequest("missing field \(key)") }
        guard let number = Self.number(value), let integer = Int(exactly: number) else {
            throw .badRequest("\(key) must be an integer")
        }
        return integer
    }

    /// A number, or nil when absent or null.
    func optionalNumber(_ key: String) throws(ServiceError) -> Double? {
        guard let value = values[key], !(value is NSNull) else { return nil }
        guard let number = Self.number(value) else { throw .badRequest("\(key) must be a number or null") }
        return number
    }

    func object(_ key: String) throws(ServiceError) -> JSONObject? {
        guard let value = values[key], !(value is NSNull) else { return nil }
        guard let object = value as? [String: Any] else { throw .badRequest("\(key) must be an object") }
        return JSONObject(values: object, context: key)
    }

    func array(_ key: String) throws(ServiceError) -> [Any] {
        guard let value = values[key] else { throw .badRequest("missing field \(key)") }
        guard let array = value as? [Any] else { throw .badRequest("\(key) must be an array") }
        return array
    }

    /// The value of `key` re-encoded as compact JSON text (for opaque payloads), or nil.
    func rawJSON(_ key: String) throws(ServiceError) -> String? {
        guard let value = values[key], !(value is NSNull) else { return nil }
        return try Self.encode(value, key)
    }

    static func encode(_ value: Any, _ key: String) throws(ServiceError) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys]) else {
            throw .badRequest("\(key) is not encodable JSON")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A JSON number that is not a boolean (Foundation reads true as 1 otherwise).
    static func number(_ value: Any) -> Double? {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }
}

/// Encodes an answer. Keys are sorted so equal objects encode to equal bytes.
func encodeJSON(_ object: Any) -> [UInt8] {
    // Every answer is built from strings, numbers, arrays, dictionaries and NSNull only.
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
        preconditionFailure("answer is not JSON-encodable: \(object)")
    }
    return Array(data)
}

/// Decodes stored JSON text (written by this service, so valid) back to a value.
func decodeStoredJSON(_ text: String?) -> Any {
    guard let text, let value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else {
        return NSNull()
    }
    return value
}
