/// A value a database stores or returns: SQLite's five storage classes, which PostgreSQL's
/// columns map onto (integers, floats, text, bytea; booleans as integers).
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var int: Int? {
        if case .integer(let value) = self { return Int(value) }
        return nil
    }

    public var int64: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    public var double: Double? {
        switch self {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }

    public var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    public var bytes: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }
}

/// Anything that can be bound to a statement parameter.
public protocol SQLBindable: Sendable {
    var sqlValue: SQLValue { get }
}

extension Int: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int64: SQLBindable { public var sqlValue: SQLValue { .integer(self) } }
extension Double: SQLBindable { public var sqlValue: SQLValue { .real(self) } }
extension String: SQLBindable { public var sqlValue: SQLValue { .text(self) } }
extension Bool: SQLBindable { public var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension SQLValue: SQLBindable { public var sqlValue: SQLValue { self } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// A blob parameter (a plain [UInt8] would be ambiguous with other sequences).
public struct Blob: SQLBindable {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var sqlValue: SQLValue { .blob(bytes) }
}

/// One result row. Its values are read by column name or position through `decode` (a value
/// that must be there) and `decodeIfPresent` (NULL is nil); a missing column, a NULL where a
/// value must be, or a value of another type throws `StorageError` (`corrupt`), never ends the
/// process and never becomes an empty or zero value.
/// Read in the caller's module (inlinable), so that each decode is specialized for its type
/// rather than looking its generic metadata up on every row.
public struct Row: Sendable {
    public let columns: [String]
    public let values: [SQLValue]

    public init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    @inlinable
    public func decode<T: SQLDecodable>(_ column: String, as type: T.Type = T.self) throws(StorageError) -> T {
        try required(value(column), column, type)
    }

    @inlinable
    public func decode<T: SQLDecodable>(_ position: Int, as type: T.Type = T.self) throws(StorageError) -> T {
        try required(value(position), "#\(position)", type)
    }

    @inlinable
    public func decodeIfPresent<T: SQLDecodable>(_ column: String, as type: T.Type = T.self) throws(StorageError) -> T? {
        try optional(value(column), column, type)
    }

    @inlinable
    public func decodeIfPresent<T: SQLDecodable>(_ position: Int, as type: T.Type = T.self) throws(StorageError) -> T? {
        try optional(value(position), "#\(position)", type)
    }

    @inlinable
    func value(_ column: String) throws(StorageError) -> SQLValue {
        guard let index = columns.firstIndex(of: column) else {
            throw StorageError(.corrupt, "a row has no column \(column) (it has \(columns.joined(separator: ", ")))")
        }
        return values[index]
    }

    @inlinable
    func value(_ position: Int) throws(StorageError) -> SQLValue {
        guard values.indices.contains(position) else {
            throw StorageError(.corrupt, "a row has no column #\(position) (it has \(values.count))")
        }
        return values[position]
    }

    @inlinable
    func required<T: SQLDecodable>(_ value: SQLValue, _ column: String, _ type: T.Type) throws(StorageError) -> T {
        guard let decoded = try optional(value, column, type) else {
            throw StorageError(.corrupt, "column \(column) is NULL where \(T.expected) must be")
        }
        return decoded
    }

    @inlinable
    func optional<T: SQLDecodable>(_ value: SQLValue, _ column: String, _ type: T.Type) throws(StorageError) -> T? {
        if value == .null, T.self != SQLValue.self { return nil }
        guard let decoded = T(sqlValue: value) else {
            throw StorageError(.corrupt, "column \(column) holds \(value.kindName) where \(T.expected) must be")
        }
        return decoded
    }
}

/// A Swift type a column's value is read as: `nil` when the value is of another kind.
public protocol SQLDecodable {
    init?(sqlValue: SQLValue)
    /// What the type reads, for an error's message ("an integer").
    static var expected: String { get }
}

extension String: SQLDecodable {
    public init?(sqlValue: SQLValue) { guard let value = sqlValue.string else { return nil }; self = value }
    public static var expected: String { "text" }
}
extension Int: SQLDecodable {
    public init?(sqlValue: SQLValue) { guard let value = sqlValue.int else { return nil }; self = value }
    public static var expected: String { "an integer" }
}
extension Int64: SQLDecodable {
    public init?(sqlValue: SQLValue) { guard let value = sqlValue.int64 else { return nil }; self = value }
    public static var expected: String { "an integer" }
}
extension Double: SQLDecodable {
    public init?(sqlValue: SQLValue) { guard let value = sqlValue.double else { return nil }; self = value }
    public static var expected: String { "a number" }
}
extension Array: SQLDecodable where Element == UInt8 {
    public init?(sqlValue: SQLValue) { guard let value = sqlValue.bytes else { return nil }; self = value }
    public static var expected: String { "a blob" }
}
/// The value as stored, whatever its kind (to bind it again).
extension SQLValue: SQLDecodable {
    public init?(sqlValue: SQLValue) { self = sqlValue }
    public static var expected: String { "a value" }
}

extension SQLValue {
    /// The storage class's name, for an error's message.
    @usableFromInline var kindName: String {
        switch self {
        case .null: "NULL"
        case .integer: "an integer"
        case .real: "a real"
        case .text: "text"
        case .blob: "a blob"
        }
    }
}
