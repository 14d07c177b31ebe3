/// A span as it ended, for the exporter.
public struct FinishedSpan: Sendable {
    public enum Kind: Int, Sendable {
        case `internal` = 1, server = 2, client = 3
    }

    public var name: String
    public var context: TraceContext
    /// The span it is under; nil for a trace's first (or one whose parent is another process's
    /// and unknown: then it is `remoteParent`).
    public var parentSpanId: UInt64?
    public var kind: Kind
    public var startNanos: UInt64
    public var endNanos: UInt64
    public var attributes: [(key: String, value: String)]
    /// Why it failed; nil when it did not.
    public var error: String?

    public init(name: String, context: TraceContext, parentSpanId: UInt64?, kind: Kind, startNanos: UInt64, endNanos: UInt64,
                attributes: [(key: String, value: String)], error: String?) {
        (self.name, self.context, self.parentSpanId, self.kind) = (name, context, parentSpanId, kind)
        (self.startNanos, self.endNanos, self.attributes, self.error) = (startNanos, endNanos, attributes, error)
    }
}
