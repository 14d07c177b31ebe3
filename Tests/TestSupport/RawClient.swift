#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A blocking TCP client that writes raw bytes and reads raw HTTP/1.1 responses, with a
/// receive timeout so that no test can hang.
public final class RawClient {
    public struct Response {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
        /// The interim (1xx) answers that came before this one (`request`).
        public var interims: [Response] = []

        public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
            (self.status, self.headers, self.body) = (status, headers, body)
        }

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object (nil when it is not one).
        public var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    public let fd: Int32
    private var pending: [UInt8] = []

    public init(port: UInt16, timeoutSeconds: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            // Not closed here: `fd` is set, so the throw runs deinit, which closes it. Closing it
            // twice closed whatever descriptor another thread had opened under that number
            // meanwhile (a pipe, a listener: the crashes and refusals of parallel tests).
            throw Failure(description: "connect: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Reads more bytes; false at end of stream. Throws on timeout or error.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            pending.append(contentsOf: chunk[0..<count])
            return true
        }
        if count == 0 { return false }
        throw Failure(description: errno == EAGAIN ? "timed out waiting for the server" : "recv: \(String(cString: strerror(errno)))")
    }

    /// Whether the server has sent something not read yet (or closed), without waiting.
    public func hasPendingInput() -> Bool {
        if !pending.isEmpty { return true }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Whether the server has closed this connection while nothing was asked of it (an idle
    /// keep-alive connection timed out), without waiting: nothing unread, and the socket at its
    /// end of stream or reset.
    public func wasClosedWhileIdle() -> Bool {
        guard pending.isEmpty else { return false }
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    /// Whether the server closed the connection (reads until end of stream or timeout).
    public func isClosedByServer() -> Bool {
        while true {
            guard let more = try? fill() else { return errno == ECONNRESET }
            if !more { return true }
        }
    }

    /// Reads one response. `bodyExpected` is false for answers to HEAD.
    public func readResponse(bodyExpected: Bool = true) throws -> Response {
        var headEnd: Int?
        while headEnd == nil {
            if let range = pending.firstRange(of: Array("\r\n\r\n".utf8)) { headEnd = range.upperBound; break }
            guard try fill() else { throw Failure(description: "connection closed before a response head") }
        }
        let head = String(decoding: pending[0..<headEnd!], as: UTF8.self)
        pending.removeFirst(headEnd!)
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line in \(head)") }
        let headers = lines.map { line -> (String, String) in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
        var response = Response(status: status, headers: headers, body: [])
        guard bodyExpected, status >= 200, status != 204, status != 304 else { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            while pending.count < length {
                guard try fill() else { throw Failure(description: "connection closed inside a body") }
            }
            response.body = Array(pending[0..<length])
            pending.removeFirst(length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            response.body = try readChunkedBody()
        } else {
            while try fill() {}
            response.body = pending
            pending = []
        }
        return response
    }

    private func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine()
            guard let size = Int(line.split(separator: ";")[0], radix: 16) else { throw Failure(description: "bad chunk size \(line)") }
            if size == 0 {
                while try !readLine().isEmpty {}
                return body
            }
            while pending.count < size + 2 {
                guard try fill() else { throw Failure(description: "closed inside a chunk") }
            }
            body.append(contentsOf: pending[0..<size])
            pending.removeFirst(size + 2)
        }
    }

    private func readLine() throws -> String {
        while true {
            if let range = pending.firstRange(of: Array("\r\n".utf8)) {
                let line = String(decoding: pending[0..<range.lowerBound], as: UTF8.self)
                pending.removeFirst(range.upperBound)
                return line
            }
            guard try fill() else { throw Failure(description: "closed inside a line") }
        }
    }
}

extension RawClient {
    /// Sends one request and reads its final answer (HEAD answers have no body); the interim
    /// (1xx) answers before it are in `interims`.
    public func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) throws -> Response {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: test\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || ["PUT", "POST", "PATCH"].contains(method) { head += "Content-Length: \(body.count)\r\n" }
        try send(Array((head + "\r\n").utf8) + body)
        var interims: [Response] = []
        for _ in 0..<16 {
            var response = try readResponse(bodyExpected: method != "HEAD")
            guard response.status < 200 else {
                response.interims = interims
                return response
            }
            interims.append(response)
        }
        throw Failure(description: "more than 16 interim answers")
    }
}
