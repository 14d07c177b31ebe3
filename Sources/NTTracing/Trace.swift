import Foundation
import Synchronization

/// Spans of the task's trace (OpenTelemetry's model, exported by whoever drains the `Tracer`).
/// A request's handler runs with its trace bound to the task (`Trace.$current`); any code it
/// awaits adds a child span with `Trace.span`, without being handed anything. Where no trace
/// is bound (tracing off, a background job), `span` only runs its body.
public enum Trace {
    /// The span the task is in, and where its spans go.
    public struct Active: Sendable {
        public let context: TraceContext
        public let tracer: Tracer

        public init(context: TraceContext, tracer: Tracer) {
            self.context = context
            self.tracer = tracer
        }
    }

    @TaskLocal public static var current: Active?

    /// `body` as a span named `name` under the task's current one; it fails with what `body`
    /// throws.
    public static func span<T>(_ name: String, kind: FinishedSpan.Kind = .internal, attributes: [(key: String, value: String)] = [],
                               _ body: () async throws -> T) async rethrows -> T {
        guard let parent = current, parent.context.sampled else { return try await body() }
        let context = parent.context.child()
        let start = Tracer.now()
        do {
            let value = try await $current.withValue(Active(context: context, tracer: parent.tracer)) { try await body() }
            parent.tracer.record(FinishedSpan(name: name, context: context, parentSpanId: parent.context.spanId, kind: kind,
                                              startNanos: start, endNanos: Tracer.now(), attributes: attributes, error: nil))
            return value
        } catch {
            parent.tracer.record(FinishedSpan(name: name, context: context, parentSpanId: parent.context.spanId, kind: kind,
                                              startNanos: start, endNanos: Tracer.now(), attributes: attributes, error: "\(error)"))
            throw error
        }
    }
}

/// Where finished spans wait for their exporter: at most `limit` of them; past that, new ones
/// are dropped and counted (an exporter that cannot keep up costs no memory).
public final class Tracer: Sendable {
    private let spans = Mutex<[FinishedSpan]>([])
    private let limit: Int
    private let droppedCount = Atomic<Int>(0)

    public init(limit: Int) {
        self.limit = limit
    }

    public func record(_ span: FinishedSpan) {
        let kept = spans.withLock { spans in
            guard spans.count < limit else { return false }
            spans.append(span)
            return true
        }
        if !kept { droppedCount.add(1, ordering: .relaxed) }
    }

    /// The spans waiting, now the exporter's.
    public func drain() -> [FinishedSpan] {
        spans.withLock { spans in
            defer { spans = [] }
            return spans
        }
    }

    /// Spans dropped since the start, the buffer being full.
    public var dropped: Int { droppedCount.load(ordering: .relaxed) }

    /// Nanoseconds since 1970, as OTLP stamps spans.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
