import NTAPIModel
import Foundation
import NTLogging

extension Identifier {
    /// The id, or a 400 naming the field.
    package static func checked(_ text: String?, _ field: String) throws(ServiceError) -> String {
        try ServiceError.parsing { () throws(InvalidDocument) in try validated(text, field) }
    }

    /// A new random id (tour ids, upload ids).
    package static func make() -> String { UUID().uuidString.lowercased() }
}

/// Times as RFC 3339 UTC text with milliseconds (they compare as text).
package enum Timestamp {
    /// `time`, `seconds` later (an expiry).
    package static func text(_ time: WallClockTime, plus seconds: Int = 0) -> String {
        var later = time
        later.seconds += Int64(seconds)
        var bytes: [UInt8] = []
        bytes.append(rfc3339: later)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A time given in Unix seconds.
    package static func at(unixSeconds: Int64) -> String {
        text(WallClockTime(seconds: unixSeconds, nanoseconds: 0))
    }
}
