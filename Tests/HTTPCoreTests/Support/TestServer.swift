#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
@testable import NTHTTPCore
import NTLogging

/// An HTTPServer on 127.0.0.1 with a port the OS picks, for one test.
final class TestServer: Sendable {
    let server: HTTPServer
    let port: UInt16

    init(configure: (inout ServerConfiguration) -> Void = { _ in },
         routes: (inout RouteTable) -> Void) throws {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configure(&configuration)
        let logger = Logger(sink: LogSink(fd: open("/dev/null", O_WRONLY)), level: .error)
        server = HTTPServer(configuration: configuration, router: Router(routes), logger: logger)
        port = try server.start().port
    }

    /// Graceful shutdown, awaited.
    func shutdown() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            server.shutdown { done.resume() }
        }
    }

    func client() throws -> RawClient { try RawClient(port: port) }
}

/// Streams a request body to a file, as an upload route does (tests only: plain writes).
func writeBody(_ body: RequestBody, to path: String) async throws -> Int64 {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    defer { close(fd) }
    var count: Int64 = 0
    for try await chunk in body {
        var offset = 0
        while offset < chunk.count {
            let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard written > 0 else { throw HTTPError.internalError("write failed") }
            offset += written
        }
        count += Int64(chunk.count)
    }
    return count
}

/// Routes the tests share.
enum TestRoutes {
    /// GET /hello, PUT /echo (body back), PUT /nobody (answers without reading the body), PUT
    /// /interim (two 104s, then the body back).
    static func standard(_ table: inout RouteTable) {
        table.add(.get, "/hello", inline: true) { _ in .json(.ok, Array("{\"hello\":true}".utf8)) }
        table.add(.put, "/echo", bodyLimit: 1 << 20) { request in
            Response(status: .ok, contentType: "application/octet-stream", body: .bytes(try await request.body.collect(upTo: request.bodyLimit)))
        }
        table.add(.put, "/nobody", bodyLimit: 1 << 20) { _ in Response(status: .accepted) }
        table.add(.put, "/interim", bodyLimit: 1 << 20) { request in
            request.sendInterim(.uploadResumptionSupported, headers: [HTTPField(name: "Location", value: "/resume/1")])
            let body = try await request.body.collect(upTo: request.bodyLimit)
            request.sendInterim(.uploadResumptionSupported, headers: [HTTPField(name: "Upload-Offset", value: String(body.count))])
            return Response(status: .ok, contentType: "application/octet-stream", body: .bytes(body))
        }
        table.add(.get, "/items/{id}") { request in
            .json(.ok, Array("{\"id\":\"\(request.parameter("id") ?? "")\"}".utf8))
        }
    }
}

extension HTTPStatus {
    static let accepted = HTTPStatus(202, "Accepted")
}
