import NTLogging

/// Writes JSON straight into bytes: no dictionaries, no casts, no Foundation. Documents write
/// their keys in sorted order by hand, so one state always gives the same bytes.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    /// Whether the container being written already holds a member (a comma is due).
    private var needsComma = false

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    // MARK: Containers

    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        open(UInt8(ascii: "{"))
        body(&self)
        close(UInt8(ascii: "}"))
    }

    public mutating func array<S: Sequence>(_ elements: S, _ body: (inout JSONWriter, S.Element) -> Void) {
        open(UInt8(ascii: "["))
        for element in elements {
            separate()
            body(&self, element)
            needsComma = true
        }
        close(UInt8(ascii: "]"))
    }

    private mutating func open(_ byte: UInt8) {
        bytes.append(byte)
        needsComma = false
    }

    private mutating func close(_ byte: UInt8) {
        bytes.append(byte)
        needsComma = true
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = false
    }

    /// A member's key (in an object body); its value follows.
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(ascii: key)
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    private mutating func memberKey(_ key: String) {
        separate()
        bytes.append(jsonString: key)
        bytes.append(UInt8(ascii: ":"))
    }

    // MARK: Values

    public mutating func string(_ text: String) {
        bytes.append(jsonString: text)
        needsComma = true
    }

    public mutating func string(_ text: String?) {
        guard let text else { return null() }
        string(text)
    }

    public mutating func int(_ value: Int) {
        bytes.append(decimal: value)
        needsComma = true
    }

    public mutating func int(_ value: Int64) {
        int(Int(value))
    }

    public mutating func bool(_ value: Bool) {
        bytes.append(ascii: value ? "true" : "false")
        needsComma = true
    }

    public mutating func null() {
        bytes.append(ascii: "null")
        needsComma = true
    }

    /// The shortest text that reads back as the same Double (2.0 as 2); JSON has no NaN or
    /// infinity, so those are null.
    public mutating func double(_ value: Double?) {
        guard let value, value.isFinite else { return null() }
        if value == value.rounded(), abs(value) < 1e15 {
            bytes.append(decimal: Int(value))
        } else {
            bytes.append(utf8: "\(value)")
        }
        needsComma = true
    }

    /// JSON text that is already valid and canonical (stored opaque values), as it is; null
    /// for none.
    public mutating func raw(_ text: String?) {
        guard let text else { return null() }
        bytes.append(utf8: text)
        needsComma = true
    }

    /// How a value's numbers are written.
    public enum Numbers: Sendable {
        /// Each number's literal exactly as it came: opaque values are kept as sent
        /// (18446744073709551615, -0.0 and 0.1000000000000000055511151231257827 stay so).
        case asSent
        /// Normalized (`number(_:)`): equal numbers in other spellings give equal bytes.
        case normalized
    }

    /// A value with its object keys sorted by their UTF-8 bytes and no whitespace; numbers
    /// as `numbers` says.
    public mutating func value(_ value: JSONValue, numbers: Numbers = .normalized) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let text):
            switch numbers {
            case .normalized: number(text)
            case .asSent:
                bytes.append(utf8: text)
                needsComma = true
            }
        case .string(let text): string(text)
        case .array(let values): array(values) { $0.value($1, numbers: numbers) }
        case .object(let members):
            object { writer in
                for member in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                    writer.memberKey(member.key)
                    writer.value(member.value, numbers: numbers)
                }
            }
        }
    }

    /// A number in canonical form: an integer as its decimal digits, any other as the
    /// shortest text of its Double (1.0 as 1, 1e2 as 100), as the service has always stored
    /// numbers; a literal no Double holds (1e999) as it came.
    private mutating func number(_ text: String) {
        if let integer = Int64(text) {
            int(integer)
        } else if let value = Double(text), value.isFinite {
            double(value)
        } else {
            bytes.append(utf8: text)
            needsComma = true
        }
    }

    /// A string-to-string object, keys sorted by their UTF-8 bytes.
    public mutating func object(_ strings: [String: String]) {
        object { writer in
            for key in strings.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                writer.memberKey(key)
                writer.string(strings[key]!)
            }
        }
    }
}

/// A document that writes its own JSON.
public protocol JSONDocument {
    func write(to writer: inout JSONWriter)
}

extension JSONDocument {
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }
}
