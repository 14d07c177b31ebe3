import Testing
import NTTracing

/// W3C Trace Context's `traceparent` (https://www.w3.org/TR/trace-context/ §3.2): what is a
/// caller's trace to continue, and what begins a new one.
@Suite struct TraceContextTests {
    @Test func aTraceparentIsReadAndWrittenAsTheRecommendationSays() throws {
        let context = try #require(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        #expect(context.traceIdHex == "4bf92f3577b34da6a3ce929d0e0e4736" && context.spanIdHex == "00f067aa0ba902b7" && context.sampled)
        #expect(context.traceparent == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        #expect(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.sampled == false)
        // A later version is read by its first four fields.
        #expect(TraceContext(traceparent: "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-later")?.sampled == true)
        let child = context.child()
        #expect(child.traceIdHex == context.traceIdHex && child.spanId != context.spanId && child.sampled)
        let root = TraceContext.root()
        #expect(root.traceparent.count == 55 && root.sampled)
    }

    @Test func whatIsNotATraceparentBeginsANewTrace() {
        for text in ["", "00", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                     "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                     "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
                     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
                     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01", "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"] {
            #expect(TraceContext(traceparent: text) == nil, "\(text)")
        }
    }
}
