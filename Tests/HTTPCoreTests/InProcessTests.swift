#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestTraits
@testable import NTHTTPCore
import NTLogging

/// `HTTPServer.respond(toMessage:)`: a request answered in process as a connection answers it,
/// by a server that was never started (no socket, no event loop).
@Suite(.hangGuard) struct InProcessTests {
    private func server(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> HTTPServer {
        var configuration = ServerConfiguration()
        configuration.handlerThreadCount = 1
        configure(&configuration)
        return HTTPServer(configuration: configuration, router: Router(TestRoutes.standard),
                          logger: Logger(sink: LogSink(fd: open("/dev/null", O_WRONLY)), level: .error))
    }

    private func stop(_ server: HTTPServer) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in server.shutdown { done.resume() } }
    }

    private func message(_ head: String, _ body: [UInt8] = []) -> [UInt8] { Array(head.utf8) + body }

    private func bytes(_ response: Response) -> [UInt8] {
        if case .bytes(let body) = response.body { return body }
        return []
    }

    @Test func aRouteAnswersWithItsParameters() async {
        let server = server()
        let answer = await server.respond(toMessage: message("GET /items/42 HTTP/1.1\r\nHost: t\r\n\r\n"))
        #expect(answer.status.code == 200)
        #expect(String(decoding: bytes(answer), as: UTF8.self) == #"{"id":"42"}"#)
        await stop(server)
    }

    @Test func refusalsAreTheConnectionsOwn() async {
        let server = server()
        let missing = await server.respond(toMessage: message("GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n"))
        #expect(missing.status.code == 404)
        #expect(String(decoding: bytes(missing), as: UTF8.self).contains(#""code":"not_found""#))
        let wrongMethod = await server.respond(toMessage: message("DELETE /hello HTTP/1.1\r\nHost: t\r\n\r\n"))
        #expect(wrongMethod.status.code == 405)
        #expect(wrongMethod.headers.contains { $0.name == "Allow" })
        // Past the route's limit by its announced length: refused before a byte is read.
        let tooLarge = await server.respond(toMessage: message("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \((1 << 20) + 1)\r\n\r\n"))
        #expect(tooLarge.status.code == 413)
        await stop(server)
    }

    /// A body many times the server's buffer reaches the handler whole, handed out in the
    /// stream's buffers; a chunked one too.
    @Test func aLargeBodyReachesTheHandlerWhole() async {
        let server = server { $0.bodyBufferBytes = 4096; $0.bodyBatchBytes = 8192 }
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let answer = await server.respond(toMessage: message("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.count)\r\n\r\n", body))
        #expect(answer.status.code == 200)
        #expect(bytes(answer) == body)
        let chunked = await server.respond(toMessage: message("PUT /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
        #expect(bytes(chunked) == Array("hello".utf8))
        await stop(server)
    }

    @Test(arguments: [
        ("GET /hello HTTP/1.1\r\nHost: t\r\n", 400),  // the head never ends
        ("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc", 400), // the body is short
        ("GET /hello HTTP/9.9\r\nHost: t\r\n\r\n", 505),
        ("NOT A REQUEST\r\n\r\n", 400),
    ])
    func aMessageTheDecoderRefusesIsAnsweredAsAConnectionWould(text: String, status: Int) async {
        let server = server()
        #expect(await server.respond(toMessage: message(text)).status.code == status)
        await stop(server)
    }
}
