#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTHTTPCore
import NTLogging

/// One access-log line per request: time, request id, method, path, status, body bytes, duration.
@Suite(.hangGuard, .testThreads) struct AccessLogTests {
    @Test func eachRequestGetsOneLogfmtLineWithItsFields() async throws {
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        defer { close(fds[0]); close(fds[1]) }
        let logger = Logger(sink: LogSink(fd: fds[1]), level: .info)
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = HTTPServer(configuration: configuration, router: Router(TestRoutes.standard), logger: logger)
        let port = try server.start().port
        let client = try RawClient(port: port)
        try client.send("PUT /echo HTTP/1.1\r\nHost: t\r\nX-Request-Id: req-1\r\nContent-Length: 5\r\n\r\nhello")
        let response = try client.readResponse()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in server.shutdown { done.resume() } }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(fds[0], &bytes, bytes.count)
        let lines = String(decoding: bytes[0..<max(0, count)], as: UTF8.self).split(separator: "\n")
        let line = try #require(lines.first { $0.contains("msg=request") })
        #expect(lines.filter { $0.contains("msg=request") }.count == 1)
        for field in ["id=req-1", "method=PUT", "path=/echo", "status=200", "in=5"] {
            #expect(line.contains(field), "\(field) missing from \(line)")
        }
        // Bytes out: the body's 5.
        #expect(response.body.count == 5)
        #expect(line.contains("out=5"))
        #expect(line.hasPrefix("time=20"))
        #expect(line.contains("duration_ms="))
    }
}
