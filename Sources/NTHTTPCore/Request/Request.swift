/// A request as handlers and middleware see it: the head, the body, the path parameters of
/// its route, its id, and what middleware learned about it (`attributes`).
public struct Request: Sendable {
    public let head: RequestHead
    public let id: RequestID
    public let body: RequestBody
    /// Set by middleware for the handlers after it (the tenant of a token, say).
    public var attributes = RequestAttributes()
    /// The route, or nil when none matched.
    public let route: Route?
    let parameterValues: [String]
    /// The client's address bytes (4 for IPv4, 16 for IPv6; empty when unknown): what limits
    /// per client key on.
    public let peerAddress: [UInt8]
    /// Monotonic nanoseconds when the head arrived.
    public let receivedAt: UInt64
    /// Where `sendInterim` goes; nil for a request that has no connection (tests).
    var interim: InterimSender?

    init(head: RequestHead, id: RequestID, body: RequestBody, route: Route?, parameterValues: [String],
         peerAddress: [UInt8] = [], receivedAt: UInt64) {
        self.head = head
        self.peerAddress = peerAddress
        self.id = id
        self.body = body
        self.route = route
        self.parameterValues = parameterValues
        self.receivedAt = receivedAt
    }

    public var method: HTTPMethod { head.method }
    public var path: String { head.path }
    public var headers: HTTPHeaders { head.headers }
    /// The body size limit of the route.
    public var bodyLimit: Int64 { route?.bodyLimit ?? 0 }

    /// Sends an informational (1xx) answer now, ahead of the final one: for a handler that
    /// still reads the body (the resumable-upload draft's `104`). Dropped when the final
    /// answer is already out.
    public func sendInterim(_ status: HTTPStatus, headers: [HTTPField]) {
        interim?.send(status, headers)
    }

    /// The value of the path parameter `{name}` of the route pattern.
    public func parameter(_ name: String) -> String? {
        guard let route, let index = route.parameterNames.firstIndex(of: name) else { return nil }
        return parameterValues[index]
    }

    /// The value of a query parameter (`RequestHead.queryParameter`).
    public func queryParameter(_ name: String) throws(HTTPError) -> String? {
        try head.queryParameter(name)
    }
}

/// Where a request's interim answers go: its connection.
protocol InterimSink: AnyObject, Sendable {
    func interim(serial: UInt64, _ status: HTTPStatus, headers: [HTTPField])
}

/// Hands an interim answer to the request's connection (no allocation per request: the
/// connection and the request's serial there).
struct InterimSender: Sendable {
    let sink: any InterimSink
    let serial: UInt64

    func send(_ status: HTTPStatus, _ headers: [HTTPField]) {
        sink.interim(serial: serial, status, headers: headers)
    }
}

/// Names a value middleware attaches to a request, with its type.
public protocol RequestAttribute {
    associatedtype Value: Sendable
}

/// Values middleware attached to a request, by key type.
public struct RequestAttributes: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    public init() {}

    public subscript<Key: RequestAttribute>(_ key: Key.Type) -> Key.Value? {
        get { values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
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
