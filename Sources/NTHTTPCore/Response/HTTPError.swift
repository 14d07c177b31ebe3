/// An error with the status and the machine-readable code of docs/api.md's error table. Every
/// error response of the server, from the parser, the router or a handler, is made from one
/// of these by `Response.error(_:)`: the single place errors become HTTP.
public struct HTTPError: HTTPErrorConvertible, Equatable {
    public var status: HTTPStatus
    public var code: String
    public var message: String
    /// Headers the error needs (`Allow`, `Retry-After`, `WWW-Authenticate`, …).
    public var headers: [HTTPField]

    public init(_ status: HTTPStatus, code: String, _ message: String, headers: [HTTPField] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// Whether the same request could succeed later: exactly 408, 429, 500, 503 and 507.
    public var isRetryable: Bool {
        switch status.code {
        case 408, 429, 500, 503, 507: return true
        default: return false
        }
    }

    public var httpError: HTTPError { self }

    /// The client closed the connection before its request body was whole.
    public static let clientClosed = HTTPError(.badRequest, code: "bad_request", "the connection closed before the body was complete")

    public static func badRequest(_ message: String) -> HTTPError { HTTPError(.badRequest, code: "bad_request", message) }
    public static func notFound(_ message: String) -> HTTPError { HTTPError(.notFound, code: "not_found", message) }
    public static func headerTooLarge(_ message: String) -> HTTPError { HTTPError(.requestHeaderFieldsTooLarge, code: "header_too_large", message) }
    public static func payloadTooLarge(_ message: String) -> HTTPError { HTTPError(.contentTooLarge, code: "payload_too_large", message) }
    public static func requestTimeout(_ message: String) -> HTTPError { HTTPError(.requestTimeout, code: "request_timeout", message) }
    public static func internalError(_ message: String) -> HTTPError { HTTPError(.internalServerError, code: "internal", message) }

    public static func methodNotAllowed(allowed: [HTTPMethod]) -> HTTPError {
        let names = allowed.map(\.name).joined(separator: ", ")
        return HTTPError(.methodNotAllowed, code: "method_not_allowed", "allowed: \(names)",
                         headers: [HTTPField(name: "Allow", value: names)])
    }

    public static func unavailable(_ message: String, retryAfterSeconds: Int) -> HTTPError {
        HTTPError(.serviceUnavailable, code: "unavailable", message,
                  headers: [HTTPField(name: "Retry-After", value: String(retryAfterSeconds))])
    }
}

/// One response header field.
public struct HTTPField: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// An error that says how it is answered over HTTP. Errors a handler throws are answered
/// this way; any other error is a 500.
public protocol HTTPErrorConvertible: Error, Sendable {
    var httpError: HTTPError { get }
}
