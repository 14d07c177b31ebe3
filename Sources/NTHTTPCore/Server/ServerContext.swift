import NTLogging
import Synchronization
import NTThreadPools

/// What every connection of a server shares: its settings, its routes behind the server's
/// middleware, its metrics and log, and the registry of open connections.
final class ServerContext: Sendable {
    /// Its limits and timeouts can change while the server runs (`HTTPServer.updateLimits`):
    /// each connection reads them as it needs them.
    private let settings: Mutex<ServerConfiguration>
    var configuration: ServerConfiguration { settings.withLock { $0 } }
    let router: Router
    let metrics: ServerMetrics
    let middleware: ServerMiddleware
    let registry = ConnectionRegistry()
    /// The threads handler tasks run on (but for inline routes, which run on their loop).
    let handlers: ThreadPool
    /// The memory request bodies may hold between sockets and handlers, all together.
    let bodyBudget: BodyBudget
    let bodyBuffers: BodyBufferPool
    /// Every request's way: the server's middleware, then its route's (or its refusal).
    private let responder: RequestResponder

    /// Whether `handlers` is the server's own (stopped with it).
    let ownsHandlers: Bool

    init(configuration: ServerConfiguration, router: Router, metrics: ServerMetrics, logger: Logger, handlers: ThreadPool?) {
        self.settings = Mutex(configuration)
        self.router = router
        self.metrics = metrics
        ownsHandlers = handlers == nil
        self.handlers = handlers ?? ThreadPool(name: "http-handler", threads: configuration.handlerThreadCount)
        bodyBudget = BodyBudget(limit: configuration.bodyBufferBudgetBytes)
        bodyBuffers = BodyBufferPool(bufferSize: configuration.bodyBufferBytes, budget: configuration.bodyBufferBudgetBytes)
        let middleware = ServerMiddleware(metrics: MetricsMiddleware(metrics: metrics), accessLog: AccessLogMiddleware(log: AccessLog(logger: logger)),
                                          errors: ErrorResponseMiddleware(logger: logger))
        self.middleware = middleware
        responder = middleware.chain.wrapping { request in
            if let refusal = request.attributes[Refusal.self] { throw refusal }
            guard let route = request.route else { throw HTTPError.notFound("no route for \(request.path)") }
            return try await route.responder(request)
        }
    }

    func update(_ change: (inout ServerConfiguration) -> Void) {
        settings.withLock { change(&$0) }
    }

    /// How a request with `head` is answered: by its route (with the path's parameters), or
    /// refused before its handler: 404, 405, 413 by its announced length (before a byte is
    /// read, so a client waiting on 100-continue never sends it), 503 when the server turns it
    /// away (`rejection`, or no connections allowed at all).
    func routing(_ head: RequestHead, rejection: String?) -> Routing {
        let configuration = self.configuration
        var routing = Routing()
        switch router.match(head.method, head.path) {
        case .notFound:
            routing.refusal = .notFound("no route for \(head.path)")
        case .methodNotAllowed(let allowed):
            routing.refusal = .methodNotAllowed(allowed: allowed)
        case .found(let found, let values):
            routing.route = found
            routing.parameters = values
            if let length = head.contentLength, length > found.bodyLimit {
                routing.refusal = .payloadTooLarge("the body of \(length) bytes exceeds \(found.bodyLimit)")
            }
        }
        if let reason = rejection ?? (configuration.maxConnections <= 0 ? "too many connections" : nil) {
            routing.refusal = .unavailable(reason, retryAfterSeconds: configuration.retryAfterSeconds)
        }
        return routing
    }

    struct Routing {
        var route: Route?
        var parameters: [String] = []
        var refusal: HTTPError?
    }

    /// The answer to a request: its handler's, or its refusal's.
    func respond(to request: Request) async -> Response {
        do {
            return try await responder(request)
        } catch {
            // ErrorResponseMiddleware answers every error; this only keeps the type honest.
            return .error(.internalError("internal error; request id \(request.id)"))
        }
    }
}

/// Why a request is answered without its handler: 404, 405, 413 by its announced length, 503
/// past the connection limit. Set by the connection; answered after the server's middleware.
enum Refusal: RequestAttribute {
    typealias Value = HTTPError
}
