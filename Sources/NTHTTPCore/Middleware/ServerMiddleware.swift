import NTLogging

/// The middleware every request passes through, outermost first, before its route's own:
/// metrics, the access log, and the answer to whatever a handler threw. Requests refused
/// before any handler (404, 405, 413 by their length, 503 past the connection limit) take the
/// same way, so every answer is counted and logged once; so do answers to requests whose head
/// never parsed, through `record(headless:)`.
struct ServerMiddleware: Sendable {
    let metrics: MetricsMiddleware
    let accessLog: AccessLogMiddleware
    let errors: ErrorResponseMiddleware

    var chain: [any Middleware] { [metrics, accessLog, errors] }

    /// Counts and logs an answer given without a head to route (a malformed or late head).
    func record(headless status: Int, id: RequestID, started: UInt64, bytesOut: Int64, now: UInt64) {
        metrics.metrics.record(route: -1, status: status, bytesIn: 0, nanoseconds: now &- started)
        accessLog.log.write(.init(id: id, method: "-", path: "-", status: status, bytesIn: 0, bytesOut: bytesOut, nanoseconds: now &- started))
    }
}

/// Answers what a handler threw: an `HTTPErrorConvertible` as docs/api.md's JSON error, anything
/// else as a 500 that names the request id (and is logged with it).
struct ErrorResponseMiddleware: Middleware {
    let logger: Logger

    func respond(to request: Request, next: RequestResponder) async throws -> Response {
        do {
            return try await next(request)
        } catch let error as any HTTPErrorConvertible {
            return .error(error.httpError)
        } catch {
            logger.error("request failed", ["id": request.id.description, "error": "\(error)"])
            return .error(.internalError("internal error; request id \(request.id)"))
        }
    }
}

/// Counts each answer by route and status, with its duration and the body bytes read.
struct MetricsMiddleware: Middleware {
    let metrics: ServerMetrics

    func respond(to request: Request, next: RequestResponder) async throws -> Response {
        let response = try await next(request)
        metrics.record(route: request.route?.index ?? -1, status: response.status.code, bytesIn: request.body.bytesReceived,
                       nanoseconds: monotonicNanoseconds() &- request.receivedAt)
        return response
    }
}

/// One access-log line per answer.
struct AccessLogMiddleware: Middleware {
    let log: AccessLog

    func respond(to request: Request, next: RequestResponder) async throws -> Response {
        let response = try await next(request)
        let path = request.route.map { $0.secretPath ? $0.pattern : request.path } ?? request.path
        log.write(.init(id: request.id, method: request.head.methodName, path: path, status: response.status.code,
                        bytesIn: request.body.bytesReceived, bytesOut: response.bodyLength(answering: request.method),
                        nanoseconds: monotonicNanoseconds() &- request.receivedAt))
        return response
    }
}

extension Response {
    /// The bytes of body this answer puts on the wire (0 for HEAD and bodiless statuses; a
    /// chunked body's length is not known in advance and counts 0).
    func bodyLength(answering method: HTTPMethod) -> Int64 {
        guard method != .head, status.allowsContent else { return 0 }
        switch body {
        case .empty, .chunked: return 0
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(let region): return region.length
        }
    }
}
