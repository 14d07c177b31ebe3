import Foundation
import Logging

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

    /// Client JSON re-encoded canonically (sorted keys, compact), e.g. opaque payloads kept
    /// as text and the plan digest's input. A value the writer does not know is the client's
    /// bad input: 400, never a crash.
    static func encode(_ value: Any, _ key: String) throws(ServiceError) -> String {
        var out: [UInt8] = []
        do throws(JSONWriter.Unsupported) {
            try JSONWriter.append(value, to: &out)
        } catch {
            throw .badRequest("\(key) holds a value JSON cannot carry (\(error.typeName))")
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A JSON number that is not a boolean (Foundation reads true as 1 otherwise).
    static func number(_ value: Any) -> Double? {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }
}

/// Encodes an answer (RFC 8259). Keys are sorted, so equal objects encode to equal bytes.
/// Written directly into bytes: Foundation's encoder spent most of a small write's time in
/// bridging casts and in ICU collation for sorting keys.
func encodeJSON(_ object: Any) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(256)
    do throws(JSONWriter.Unsupported) {
        try JSONWriter.append(object, to: &out)
    } catch {
        // Answers are built by this service from the writer's types only: a bug to fix.
        preconditionFailure("an answer holds a \(error.typeName), which is not a JSON value")
    }
    return out
}

/// The values answers are built from: strings, numbers, booleans, null, arrays and objects,
/// as Swift values or as Foundation decoded them.
enum JSONWriter {
    struct Unsupported: Error {
        let typeName: String
    }

    static func append(_ value: Any, to out: inout [UInt8]) throws(Unsupported) {
        // By the value's exact type first: a conditional cast from Any costs thousands of
        // instructions (it looks for bridging), a comparison of metatypes almost nothing.
        let type = type(of: value)
        if type == String.self {
            out.append(jsonString: value as! String)
        } else if type == Int.self {
            out.append(decimal: value as! Int)
        } else if type == Bool.self {
            out.append(ascii: value as! Bool ? "true" : "false")
        } else if type == Int64.self {
            out.append(decimal: Int(value as! Int64))
        } else if type == Double.self {
            appendDouble(value as! Double, &out)
        } else if type is NSNumber.Type, let number = value as? NSNumber {
            appendNumber(number, &out) // decoded by Foundation: its objCType says what it is
        } else if type is NSNull.Type {
            out.append(ascii: "null")
        } else if let encodable = value as? any JSONEncodable {
            encodable.appendJSON(to: &out)
        } else if type == [String: String].self {
            try appendObject(value as! [String: String], &out)
        } else if let object = value as? [String: Any] {
            try appendObject(object, &out)
        } else if let array = value as? [Any] {
            out.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try append(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        } else {
            throw Unsupported(typeName: "\(type)")
        }
    }

    /// An object with its keys in order, so the same document is always the same bytes.
    private static func appendObject<Value>(_ object: [String: Value], _ out: inout [UInt8]) throws(Unsupported) {
        out.append(UInt8(ascii: "{"))
        for (index, key) in object.keys.sorted().enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(jsonString: key)
            out.append(UInt8(ascii: ":"))
            try append(object[key]!, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    private static func appendNumber(_ number: NSNumber, _ out: inout [UInt8]) {
        switch String(cString: number.objCType) {
        case "c", "B": out.append(ascii: number.boolValue ? "true" : "false")
        case "f", "d": appendDouble(number.doubleValue, &out)
        default: out.append(decimal: Int(number.int64Value))
        }
    }

    /// The shortest text that reads back as the same Double; JSON has no NaN or infinity.
    private static func appendDouble(_ double: Double, _ out: inout [UInt8]) {
        guard double.isFinite else {
            out.append(ascii: "null")
            return
        }
        if double == double.rounded(), abs(double) < 1e15 {
            out.append(decimal: Int(double)) // 2.0 as 2, as Foundation wrote it
        } else {
            out.append(utf8: "\(double)")
        }
    }
}

/// A value that writes its own JSON, typed: no dictionary, no casts.
protocol JSONEncodable {
    /// Appends the value's canonical JSON (object keys sorted).
    func appendJSON(to out: inout [UInt8])
}

/// Decodes stored JSON text (written by this service, so valid) back to a value.
func decodeStoredJSON(_ text: String?) -> Any {
    guard let text, let value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else {
        return NSNull()
    }
    return value
}
