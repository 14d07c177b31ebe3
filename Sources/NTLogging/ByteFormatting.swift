#if canImport(Glibc)
import Glibc
#endif

/// Appends text to a byte array without building intermediate Strings: the formatting that
/// log lines, response heads and JSON error bodies share on the hot path.
extension Array where Element == UInt8 {
    @inlinable
    public mutating func append(ascii string: StaticString) {
        string.withUTF8Buffer { append(contentsOf: $0) }
    }

    @inlinable
    public mutating func append(utf8 string: String) {
        var string = string
        string.withUTF8 { append(contentsOf: $0) }
    }

    /// Decimal digits of a non-negative or negative integer.
    public mutating func append(decimal value: Int) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            append(decimal: UInt64(value.magnitude))
        } else {
            append(decimal: UInt64(value))
        }
    }

    public mutating func append(decimal value: UInt64) {
        var digits = 1
        var probe = value
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        let start = count
        append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var rest = value
        for index in stride(from: start + digits - 1, through: start, by: -1) {
            self[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }

    /// Lowercase hex digits of a value: as few as it needs, or exactly `width` (zero-padded,
    /// high digits dropped).
    public mutating func append(hex value: UInt64, width: Int? = nil) {
        let needed = Swift.max(1, (UInt64.bitWidth - value.leadingZeroBitCount + 3) / 4)
        for digit in stride(from: (width ?? needed) - 1, through: 0, by: -1) {
            append(Self.hexDigit(UInt8((value >> UInt64(digit * 4)) & 0xf)))
        }
    }

    /// A value with a fixed number of decimals, e.g. 1234 with 3 → "1.234".
    public mutating func append(fixedPoint value: UInt64, decimals: Int) {
        var divisor: UInt64 = 1
        for _ in 0..<decimals { divisor *= 10 }
        append(decimal: value / divisor)
        append(UInt8(ascii: "."))
        var fraction = value % divisor
        var remaining = decimals
        var scale = divisor / 10
        while remaining > 0 {
            append(UInt8(ascii: "0") + UInt8(fraction / scale))
            fraction %= scale
            scale /= 10
            remaining -= 1
        }
    }

    /// A JSON string literal (RFC 8259 §7), quotes included.
    public mutating func append(jsonString string: String) {
        append(UInt8(ascii: "\""))
        var string = string
        // Most strings need no escape: one copy then.
        let plain = string.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            append(contentsOf: bytes)
            return true
        }
        guard !plain else {
            append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append(ascii: "\\\"")
            case UInt8(ascii: "\\"): append(ascii: "\\\\")
            case UInt8(ascii: "\n"): append(ascii: "\\n")
            case UInt8(ascii: "\r"): append(ascii: "\\r")
            case UInt8(ascii: "\t"): append(ascii: "\\t")
            case 0..<0x20:
                append(ascii: "\\u00")
                append(Self.hexDigit(byte >> 4))
                append(Self.hexDigit(byte & 0x0f))
            default: append(byte)
            }
        }
        append(UInt8(ascii: "\""))
    }

    /// A logfmt value: bare when it is a plain token, else quoted with escapes.
    public mutating func append(logfmtValue bytes: some Collection<UInt8>) {
        let needsQuote = { (byte: UInt8) in byte <= 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "=") || byte == 0x7f || byte == UInt8(ascii: "\\") }
        let needsQuotes = bytes.isEmpty || (bytes.withContiguousStorageIfAvailable { $0.contains(where: needsQuote) } ?? bytes.contains(where: needsQuote))
        guard needsQuotes else {
            append(contentsOf: bytes)
            return
        }
        append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): append(ascii: "\\\"")
            case UInt8(ascii: "\\"): append(ascii: "\\\\")
            case UInt8(ascii: "\n"): append(ascii: "\\n")
            case 0..<0x20, 0x7f:
                append(ascii: "\\x")
                append(Self.hexDigit(byte >> 4))
                append(Self.hexDigit(byte & 0x0f))
            default: append(byte)
            }
        }
        append(UInt8(ascii: "\""))
    }

    /// RFC 3339 UTC time with milliseconds, e.g. 2026-11-30T09:00:00.123Z.
    public mutating func append(rfc3339 time: WallClockTime) {
        var parts = tm()
        var seconds = time_t(time.seconds)
        gmtime_r(&seconds, &parts)
        appendPadded(Int(parts.tm_year) + 1900, width: 4)
        append(UInt8(ascii: "-"))
        appendPadded(Int(parts.tm_mon) + 1, width: 2)
        append(UInt8(ascii: "-"))
        appendPadded(Int(parts.tm_mday), width: 2)
        append(UInt8(ascii: "T"))
        appendPadded(Int(parts.tm_hour), width: 2)
        append(UInt8(ascii: ":"))
        appendPadded(Int(parts.tm_min), width: 2)
        append(UInt8(ascii: ":"))
        appendPadded(Int(parts.tm_sec), width: 2)
        append(UInt8(ascii: "."))
        appendPadded(Int(time.nanoseconds / 1_000_000), width: 3)
        append(UInt8(ascii: "Z"))
    }

    public mutating func appendPadded(_ value: Int, width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            append(UInt8(ascii: "0") + UInt8((rest / divisor) % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    @usableFromInline
    static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}

/// A wall-clock instant, read without Foundation.
public struct WallClockTime: Sendable, Equatable {
    public var seconds: Int64
    public var nanoseconds: Int64

    public init(seconds: Int64, nanoseconds: Int64) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public static func now() -> WallClockTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return WallClockTime(seconds: Int64(spec.tv_sec), nanoseconds: Int64(spec.tv_nsec))
    }
}

/// Monotonic nanoseconds, for durations and deadlines.
public func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}
