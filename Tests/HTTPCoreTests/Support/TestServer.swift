#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
@testable import HTTPCore
import Logging

/// An HTTPServer on 127.0.0.1 with a port the OS picks, for one test.
final class TestServer: Sendable {
    let server: HTTPServer
    let port: UInt16

    init(backend: EventBackendKind, configure: (inout ServerConfiguration) -> Void = { _ in },
         routes: (inout RouteTable) -> Void) throws {
        var configuration = ServerConfiguration()
        configuration.eventBackend = backend
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

/// A request body sink that keeps the bytes in memory (tests only: bodies are small).
final class CollectingSink: BodySink {
    private(set) var bytes: [UInt8] = []
    private let respond: @Sendable ([UInt8]) -> Response

    init(_ respond: @escaping @Sendable ([UInt8]) -> Response) {
        self.respond = respond
    }

    func receive(_ chunk: UnsafeRawBufferPointer) throws(HTTPError) { bytes.append(contentsOf: chunk) }
    func finish(responder: Responder) -> Response? { respond(bytes) }
    func abort() {}
}

/// A sink that streams the body to a file, as an upload route does.
final class FileSink: BodySink {
    private let fd: Int32
    private var count: Int64 = 0

    init(path: String) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    }

    deinit { close(fd) }

    func receive(_ chunk: UnsafeRawBufferPointer) throws(HTTPError) {
        var offset = 0
        while offset < chunk.count {
            let written = write(fd, chunk.baseAddress! + offset, chunk.count - offset)
            guard written > 0 else { throw .internalError("write failed") }
            offset += written
        }
        count += Int64(chunk.count)
    }

    func finish(responder: Responder) -> Response? {
        .json(.created, Array("{\"size\":\(count)}".utf8))
    }

    func abort() {}
}

/// Routes the tests share.
enum TestRoutes {
    /// GET /hello, PUT /echo (body back), PUT /nobody (answers without reading the body).
    static func standard(_ table: inout RouteTable) {
        table.add(.get, "/hello") { _, _ in .response(.json(.ok, Array("{\"hello\":true}".utf8))) }
        table.add(.put, "/echo", bodyLimit: 1 << 20) { request, _ in
            .readBody(CollectingSink { .init(status: .ok, contentType: "application/octet-stream", body: .bytes($0)) }, limit: request.bodyLimit)
        }
        table.add(.put, "/nobody", bodyLimit: 1 << 20) { _, _ in .response(.init(status: .accepted)) }
        table.add(.get, "/items/{id}") { request, _ in
            .response(.json(.ok, Array("{\"id\":\"\(request.parameter("id") ?? "")\"}".utf8)))
        }
    }
}

extension HTTPStatus {
    static let accepted = HTTPStatus(202, "Accepted")
}
