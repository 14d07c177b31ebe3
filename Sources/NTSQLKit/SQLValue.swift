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

/// One result row, by column name or index.
public struct Row: Sendable {
    public let columns: [String]
    public let values: [SQLValue]

    public init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    public subscript(_ index: Int) -> SQLValue { values[index] }

    public subscript(_ name: String) -> SQLValue {
        guard let index = columns.firstIndex(of: name) else {
            preconditionFailure("no column \(name) in \(columns)")
        }
        return values[index]
    }
}
