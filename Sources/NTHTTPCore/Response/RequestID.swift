import Synchronization
import NTLogging

/// The id of one request, on every response as `X-Request-Id` and in every log line about
/// it: the client's own when it sent a sane one, else one made here from a per-process
/// random prefix and a counter (unique in a run, unlikely to repeat across restarts).
/// Generated ids are 15 hex digits, which Swift stores inline: no allocation per request.
public enum RequestID: Sendable, Equatable, CustomStringConvertible {
    case generated(UInt64)
    case client(String)

    private static let counter = Atomic<UInt64>(0)
    private static let prefix = UInt64.random(in: 0..<(1 << 28)) << 32

    static func next() -> RequestID {
        let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return .generated(prefix | (count & 0xffff_ffff))
    }

    /// The client's id when it is 1–128 characters of letters, digits and `-_.:`; else nil.
    static func fromClient(_ value: UnsafeRawBufferPointer) -> RequestID? {
        guard !value.isEmpty, value.count <= 128 else { return nil }
        for byte in value {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"):
                continue
            default:
                return nil
            }
        }
        return .client(String(decoding: value, as: UTF8.self))
    }

    func write(into out: inout [UInt8]) {
        switch self {
        case .generated(let value):
            out.append(hex: value, width: 15)
        case .client(let value):
            out.append(utf8: value)
        }
    }

    public var description: String {
        var out = [UInt8]()
        write(into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
