#if canImport(Glibc)
import Glibc
#endif
import NTLogging

/// A response a handler gives back: status, header fields and a body.
public struct Response: Sendable {
    public var status: HTTPStatus
    /// `Content-Type`, kept apart from `headers` so the common case allocates nothing.
    public var contentType: String?
    public var headers: [HTTPField]
    public var body: ResponseBody

    public init(status: HTTPStatus, contentType: String? = nil, headers: [HTTPField] = [], body: ResponseBody = .empty) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    /// A JSON body, already encoded.
    public static func json(_ status: HTTPStatus, _ bytes: [UInt8], headers: [HTTPField] = []) -> Response {
        Response(status: status, contentType: "application/json", headers: headers, body: .bytes(bytes))
    }

    /// The JSON error body of docs/api.md: `{"error": {"code", "message", "retryable"}}`.
    public static func error(_ error: HTTPError) -> Response {
        var body = [UInt8]()
        body.reserveCapacity(64 + error.message.utf8.count)
        body.append(ascii: "{\"error\":{\"code\":")
        body.append(jsonString: error.code)
        body.append(ascii: ",\"message\":")
        body.append(jsonString: error.message)
        body.append(ascii: ",\"retryable\":")
        if error.isRetryable { body.append(ascii: "true") } else { body.append(ascii: "false") }
        body.append(ascii: "}}")
        return .json(error.status, body, headers: error.headers)
    }
}

extension Response {
    /// The whole response as bytes with `Connection: close`, for answering without a
    /// connection object (no request id, no chunking: a bytes body only).
    func closingBytes() -> [UInt8] {
        guard case .bytes(let body) = body else { preconditionFailure("closingBytes needs a bytes body") }
        var text = "HTTP/1.1 \(status.code) \(status.reason)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        if let contentType { text += "Content-Type: \(contentType)\r\n" }
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        return Array((text + "\r\n").utf8) + body
    }
}

/// What follows a response head.
public enum ResponseBody: Sendable {
    case empty
    /// A fixed-length body in memory.
    case bytes([UInt8])
    /// A range of an open file, sent with sendfile(2) without passing through memory.
    case file(FileRegion)
    /// A body of unknown length, sent with chunked transfer coding (RFC 9112 §7.1), pulled
    /// piece by piece as the socket drains.
    case chunked(any ChunkedBodySource)
}

/// A range of an open file to send. Closes the file when released.
public final class FileRegion: Sendable {
    public let fd: Int32
    public let offset: Int64
    public let length: Int64

    /// Takes ownership of `fd`.
    public init(fd: Int32, offset: Int64, length: Int64) {
        self.fd = fd
        self.offset = offset
        self.length = length
    }

    deinit { close(fd) }
}

/// The producer of a chunked body. Called on the connection's context whenever the socket
/// can take more; returns nil at the end.
public protocol ChunkedBodySource: AnyObject, Sendable {
    func nextChunk() throws -> [UInt8]?
}
