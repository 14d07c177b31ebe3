/// A value SQLite stores or returns.
public enum SQLiteValue: Sendable, Equatable {
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
public protocol SQLiteBindable: Sendable {
    var sqliteValue: SQLiteValue { get }
}

extension Int: SQLiteBindable { public var sqliteValue: SQLiteValue { .integer(Int64(self)) } }
extension Int64: SQLiteBindable { public var sqliteValue: SQLiteValue { .integer(self) } }
extension Double: SQLiteBindable { public var sqliteValue: SQLiteValue { .real(self) } }
extension String: SQLiteBindable { public var sqliteValue: SQLiteValue { .text(self) } }
extension Bool: SQLiteBindable { public var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) } }
extension SQLiteValue: SQLiteBindable { public var sqliteValue: SQLiteValue { self } }
extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    public var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
}

/// A blob parameter (a plain [UInt8] would be ambiguous with other sequences).
public struct Blob: SQLiteBindable {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var sqliteValue: SQLiteValue { .blob(bytes) }
}

/// One result row, by column name or index.
public struct Row: Sendable {
    let columns: [String]
    public let values: [SQLiteValue]

    public subscript(_ index: Int) -> SQLiteValue { values[index] }

    public subscript(_ name: String) -> SQLiteValue {
        guard let index = columns.firstIndex(of: name) else {
            preconditionFailure("no column \(name) in \(columns)")
        }
        return values[index]
    }
}
