import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTTracing

/// A server span per request, when traces are sent (`otlpEndpoint`): under the caller's span
/// when its `traceparent` names one, else a new trace's first; named by the route. The handler
/// runs with it bound (`Trace.current`), so the database, store and image work it awaits
/// become its child spans. A caller's trace marked not to be recorded is not.
struct RequestTracing: Middleware {
    let tracer: Tracer

    func respond(to request: Request, next: RequestResponder) async throws -> Response {
        let caller = request.headers["traceparent"].flatMap(TraceContext.init(traceparent:))
        let context = caller?.child() ?? .root()
        guard context.sampled else { return try await next(request) }
        let route = request.route.map { "\($0.method.name) \($0.pattern)" } ?? request.head.methodName
        let start = Tracer.now()
        func finish(status: Int) {
            tracer.record(FinishedSpan(name: route, context: context, parentSpanId: caller?.spanId, kind: .server, startNanos: start,
                                       endNanos: Tracer.now(),
                                       attributes: [("http.request.method", request.head.methodName), ("http.route", request.route?.pattern ?? ""),
                                                    ("url.path", request.route.map { $0.secretPath ? $0.pattern : request.head.path } ?? request.head.path),
                                                    ("http.response.status_code", String(status))],
                                       error: status >= 500 ? "HTTP \(status)" : nil))
        }
        do {
            let response = try await Trace.$current.withValue(Trace.Active(context: context, tracer: tracer)) { try await next(request) }
            finish(status: response.status.code)
            return response
        } catch {
            finish(status: (error as? any HTTPErrorConvertible)?.httpError.status.code ?? 500)
            throw error
        }
    }
}
