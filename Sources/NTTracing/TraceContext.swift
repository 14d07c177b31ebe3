import Foundation

/// Where a span is in its trace: the trace's id, the span's own, and whether the trace is
/// recorded (W3C Trace Context's `traceparent`: `00-<trace id>-<span id>-<flags>`).
public struct TraceContext: Sendable, Equatable {
    public var traceHigh: UInt64
    public var traceLow: UInt64
    public var spanId: UInt64
    public var sampled: Bool

    public init(traceHigh: UInt64, traceLow: UInt64, spanId: UInt64, sampled: Bool) {
        (self.traceHigh, self.traceLow, self.spanId, self.sampled) = (traceHigh, traceLow, spanId, sampled)
    }

    /// A new trace's first span.
    public static func root() -> TraceContext {
        TraceContext(traceHigh: .random(in: 1 ... .max), traceLow: .random(in: 1 ... .max), spanId: .random(in: 1 ... .max), sampled: true)
    }

    /// A span of the same trace under this one.
    public func child() -> TraceContext {
        TraceContext(traceHigh: traceHigh, traceLow: traceLow, spanId: .random(in: 1 ... .max), sampled: sampled)
    }

    /// A `traceparent` field's context; nil when it is not one (then a new trace begins). A
    /// version above 00 is read as 00 (its first four fields), as the recommendation says.
    public init?(traceparent: String) {
        let fields = traceparent.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].count == 2, fields[0] != "ff", fields[0] != "00" || fields.count == 4,
              Self.isLowerHex(fields[0]), fields[1].count == 32, fields[2].count == 16, fields[3].count == 2,
              let high = Self.hex(fields[1].prefix(16)), let low = Self.hex(fields[1].suffix(16)), let span = Self.hex(fields[2]),
              let flags = Self.hex(fields[3]), high | low != 0, span != 0 else { return nil }
        self.init(traceHigh: high, traceLow: low, spanId: span, sampled: flags & 1 == 1)
    }

    public var traceparent: String { "00-\(traceIdHex)-\(spanIdHex)-\(sampled ? "01" : "00")" }
    public var traceIdHex: String { Self.hex16(traceHigh) + Self.hex16(traceLow) }
    public var spanIdHex: String { Self.hex16(spanId) }

    public static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func isLowerHex(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    private static func hex(_ text: Substring) -> UInt64? {
        isLowerHex(text) ? UInt64(text, radix: 16) : nil
    }
}
