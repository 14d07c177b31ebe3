/// What answers a request: a route's handler, or a handler behind its middleware.
public typealias RequestResponder = @Sendable (Request) async throws -> Response

/// Code every request of a group of routes passes through before (and after) its handler:
/// authentication, a protocol version check, the access log, metrics. It may answer itself
/// (throw an error, return a response), change the request for the handlers after it (attach
/// attributes), or look at the answer on its way back.
public protocol Middleware: Sendable {
    func respond(to request: Request, next: RequestResponder) async throws -> Response
}

extension Array where Element == any Middleware {
    /// `responder` behind these middleware, the first one outermost. Built once, when routes
    /// are added: a request costs nested calls, no allocation.
    func wrapping(_ responder: @escaping RequestResponder) -> RequestResponder {
        reversed().reduce(responder) { next, middleware in
            { request in try await middleware.respond(to: request, next: next) }
        }
    }
}
