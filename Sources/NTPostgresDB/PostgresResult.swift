import CNTPostgres

/// A statement's result from libpq, read as `Row`s; cleared when the last reference goes. It
/// belongs to no connection once received, so it may travel from the thread that received it
/// to the task that asked.
final class PostgresResult: @unchecked Sendable {
    let pointer: OpaquePointer?

    init(_ pointer: OpaquePointer?) { self.pointer = pointer }
    deinit { PQclear(pointer) }

    var columnCount: Int32 { PQnfields(pointer) }
    var rowCount: Int32 { PQntuples(pointer) }
    func columnName(_ column: Int32) -> String { String(cString: PQfname(pointer, column)) }
    /// The rows a command changed (0 for a query).
    var changedRows: Int { Int(String(cString: PQcmdTuples(pointer))) ?? 0 }

    /// Every row, read as `SQLValue`s by each column's type.
    var allRows: [Row] {
        let range = 0..<columnCount
        let columns = range.map(columnName)
        let types = range.map { PQftype(pointer, $0) }
        return (0..<rowCount).map { row in
            Row(columns: columns, values: zip(range, types).map { column, type in value(row, column, type: type) })
        }
    }

    /// The error this result reports, if it is one; `connection` gives the message when the
    /// result is missing (libpq ran out of memory, or the connection failed).
    static func error(of pointer: OpaquePointer?, connection: OpaquePointer?) -> PostgresError? {
        let status = pointer.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return nil }
        let sqlState = pointer.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) } ?? ""
        let message = pointer.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "M"))) }.map { String(cString: $0) }
        return PostgresError(sqlState: sqlState, message: message ?? PostgresError.connectionFailed(connection).message)
    }

    /// PostgreSQL type OIDs (pg_type.dat) read as what SQLite would have returned.
    private func value(_ row: Int32, _ column: Int32, type: Oid) -> SQLValue {
        guard PQgetisnull(pointer, row, column) == 0, let raw = PQgetvalue(pointer, row, column) else { return .null }
        let text = String(cString: raw)
        switch type {
        case 16: return .integer(text == "t" ? 1 : 0) // bool
        case 20, 21, 23: return Int64(text).map(SQLValue.integer) ?? .text(text) // int8, int2, int4
        case 1700: return Int64(text).map(SQLValue.integer) ?? Double(text).map(SQLValue.real) ?? .text(text) // numeric (sum)
        case 700, 701: return Double(text).map(SQLValue.real) ?? .text(text) // float4, float8
        case 17: // bytea, in its hex text form
            var length = 0
            guard let bytes = PQunescapeBytea(raw, &length) else { return .blob([]) }
            defer { PQfreemem(bytes) }
            return .blob(Array(UnsafeBufferPointer(start: bytes, count: length)))
        default: return .text(text)
        }
    }
}

/// Each parameter as text (blobs as bytes, format 1), kept alive for `body`: its count, values,
/// lengths and formats as libpq's calls take them.
func withParameters<R>(_ arguments: [any SQLBindable], _ body: (Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) -> R) -> R {
    let values = arguments.map(\.sqlValue)
    let texts: [[CChar]?] = values.map { value in
        switch value {
        case .null: nil
        case .integer(let number): Array(String(number).utf8CString)
        case .real(let number): Array("\(number)".utf8CString)
        case .text(let text): Array(text.utf8CString)
        // An empty blob still needs a pointer: libpq reads a null one as SQL NULL.
        case .blob(let bytes): bytes.isEmpty ? [0] : bytes.map { CChar(bitPattern: $0) }
        }
    }
    let lengths = values.map { value -> Int32 in if case .blob(let bytes) = value { Int32(bytes.count) } else { 0 } }
    let formats = values.map { value -> Int32 in if case .blob = value { 1 } else { 0 } }
    return withPointers(texts) { pointers in body(Int32(values.count), pointers, lengths, formats) }
}

/// Runs `body` with C pointers to each optional byte array (nil for SQL NULL).
private func withPointers<R>(_ arrays: [[CChar]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafePointer<CChar>?] = []
    pointers.reserveCapacity(arrays.count)
    func next(_ index: Int) -> R {
        guard index < arrays.count else { return body(pointers) }
        guard let array = arrays[index] else {
            pointers.append(nil)
            return next(index + 1)
        }
        return array.withUnsafeBufferPointer { buffer in
            pointers.append(buffer.baseAddress)
            return next(index + 1)
        }
    }
    return next(0)
}

extension String {
    var trimmingTrailingNewlines: String {
        var text = self
        while text.last == "\n" { text.removeLast() }
        return text
    }
}
