/// A route's code. Called on the connection's context once the head has arrived.
public protocol RequestHandler: Sendable {
    func handle(_ request: Request, responder: Responder) -> HandlerResult
}

/// A handler as a closure.
public struct ClosureHandler: RequestHandler {
    private let body: @Sendable (Request, Responder) -> HandlerResult

    public init(_ body: @escaping @Sendable (Request, Responder) -> HandlerResult) {
        self.body = body
    }

    public func handle(_ request: Request, responder: Responder) -> HandlerResult {
        body(request, responder)
    }
}

/// What a handler does with a request.
public enum HandlerResult {
    /// Answer now. A request body is not read (and `100 Continue` never sent).
    case response(Response)
    /// Stream the body into the sink, up to `limit` bytes (413 past it); the sink answers.
    /// `100 Continue` is sent first when the client asked for it.
    case readBody(any BodySink, limit: Int64)
    /// The handler answers later through the responder, from any thread. The body is not read.
    case deferred
}

/// Receives a request body as it arrives. Used only on the connection's context, one call at
/// a time: while `receive` runs the socket is not read, which is the back-pressure.
public protocol BodySink: AnyObject {
    /// The next piece of the body, valid only during the call. Throwing answers with the
    /// error and closes the connection.
    func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTPError)
    /// The whole body arrived. Return the response, or nil to answer later through `responder`.
    func finish(responder: Responder) -> Response?
    /// The request ended before its body did (the client went away, a limit or a timeout):
    /// undo whatever is partial.
    func abort()
}

/// Answers one request from any thread, exactly once. Later calls, and calls after the
/// connection closed, are ignored.
public struct Responder: Sendable {
    let connection: HTTPConnection
    let serial: UInt64

    public func send(_ response: Response) {
        connection.respondLater(serial: serial, response)
    }
}

/// A request as a handler sees it: the head, the path parameters of its route, its id.
public struct Request: Sendable {
    public let head: RequestHead
    public let id: RequestID
    let route: Route
    let parameterValues: [String]

    public var method: HTTPMethod { head.method }
    public var path: String { head.path }
    public var headers: HTTPHeaders { head.headers }
    /// The body size limit of the route.
    public var bodyLimit: Int64 { route.bodyLimit }

    /// The value of the path parameter `{name}` of the route pattern.
    public func parameter(_ name: String) -> String? {
        guard let index = route.parameterNames.firstIndex(of: name) else { return nil }
        return parameterValues[index]
    }

    /// The first value of a query parameter (`a=b&c=d`), percent-decoded; nil when absent or
    /// not valid percent-encoding.
    public func queryParameter(_ name: String) -> String? {
        guard let query = head.query else { return nil }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = percentDecode(parts[0]), key == name else { continue }
            return parts.count > 1 ? percentDecode(parts[1]) : ""
        }
        return nil
    }
}

/// Decodes `%XX` escapes and `+` as space (form encoding, RFC 3986 §2.1); nil when malformed.
func percentDecode(_ text: Substring) -> String? {
    var bytes = [UInt8]()
    bytes.reserveCapacity(text.utf8.count)
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
        switch byte {
        case UInt8(ascii: "+"):
            bytes.append(UInt8(ascii: " "))
        case UInt8(ascii: "%"):
            guard let high = iterator.next().flatMap(hexDigitValue), let low = iterator.next().flatMap(hexDigitValue) else { return nil }
            bytes.append(high << 4 | low)
        default:
            bytes.append(byte)
        }
    }
    return String(validating: bytes, as: UTF8.self)
}
