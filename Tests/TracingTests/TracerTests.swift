import Testing
import NTTracing

/// The tracer holds at most its limit of spans for the exporter; past it, new ones are dropped
/// and counted, and a drain empties it.
@Suite struct TracerTests {
    @Test func spansPastTheLimitAreDroppedAndCounted() async {
        let tracer = Tracer(limit: 2)
        let root = TraceContext.root()
        await Trace.$current.withValue(Trace.Active(context: root, tracer: tracer)) {
            for name in ["a", "b", "c"] { await Trace.span(name) {} }
        }
        #expect(tracer.dropped == 1)
        let drained = tracer.drain()
        #expect(drained.map(\.name) == ["a", "b"] && drained.allSatisfy { $0.parentSpanId == root.spanId && $0.context.traceIdHex == root.traceIdHex })
        #expect(tracer.drain().isEmpty)
        // No trace bound: the body runs, nothing is recorded.
        #expect(await Trace.span("alone") { 7 } == 7)
        #expect(tracer.drain().isEmpty && tracer.dropped == 1)
    }
}
