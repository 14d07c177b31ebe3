import Foundation
import HTTPCore
import Logging

/// Client-made ids are UUIDs in lowercase canonical text (API.md "Principles"). Checked before
/// an id reaches SQL or a file path.
enum Identifier {
    static func isValid(_ text: String) -> Bool {
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

    /// The id, or a 400 naming the field.
    static func validated(_ text: String?, _ field: String) throws(ServiceError) -> String {
        guard let text else { throw .badRequest("missing \(field)") }
        guard isValid(text) else { throw .badRequest("\(field) must be a lowercase UUID, got \"\(text.prefix(64))\"") }
        return text
    }

    /// A new random id (tour ids).
    static func make() -> String { UUID().uuidString.lowercased() }
}

/// Times as RFC 3339 UTC text with milliseconds.
enum Timestamp {
    static func now() -> String {
        var bytes: [UInt8] = []
        bytes.append(rfc3339: WallClockTime.now())
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Request {
    /// The path parameter `{name}` as a client-made id, or a 400 naming it.
    func uuid(_ name: String) throws(ServiceError) -> String {
        try Identifier.validated(parameter(name), name)
    }
}
