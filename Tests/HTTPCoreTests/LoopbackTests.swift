#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
import NTThreadPools
@testable import NTHTTPCore

/// The server over real sockets on 127.0.0.1, driven by a raw client.
@Suite(.hangGuard, .testThreads) struct LoopbackTests {
    /// Connections that arrive together are spread over the loops, whichever loop accepts them:
    /// each loop serves as many (an inline handler runs on its connection's loop, and says which).
    @Test func aBurstOfConnectionsIsSpreadOverTheLoops() async throws {
        let server = try TestServer(configure: { $0.eventLoopCount = 2 }) { table in
            table.add(.get, "/loop", inline: true) { _ in .json(.ok, Array("\(EventLoopThread.current?.index ?? -1)".utf8)) }
        }
        let clients = try (0..<8).map { _ in try server.client() }
        var served: [String: Int] = [:]
        for client in clients {
            try client.send("GET /loop HTTP/1.1\r\nHost: t\r\n\r\n")
            served[try client.readResponse().text, default: 0] += 1
        }
        #expect(served == ["0": 4, "1": 4])
        await server.shutdown()
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        for _ in 0..<3 {
            try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "{\"hello\":true}")
            #expect(response.header("Connection") == nil)
            #expect(response.header("X-Request-Id")?.isEmpty == false)
            #expect(response.header("Date")?.hasSuffix("GMT") == true)
        }
        await server.shutdown()
    }

    /// A handler's interim answers go out before its final one, in order, with their fields;
    /// the connection goes on serving after them.
    @Test func interimAnswersPrecedeTheFinalOne() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("PUT /interim HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        let first = try client.readResponse()
        #expect(first.status == 104 && first.header("Location") == "/resume/1")
        #expect(try client.readResponse().status == 100) // the body is asked for after the 104
        try client.send("hello")
        let second = try client.readResponse()
        #expect(second.status == 104 && second.header("Upload-Offset") == "5" && second.header("Location") == nil)
        let final = try client.readResponse()
        #expect(final.status == 200 && final.text == "hello")
        try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        await server.shutdown()
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("GET /items/1 HTTP/1.1\r\nHost: t\r\n\r\n"
            + "PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"
            + "GET /items/2 HTTP/1.1\r\nHost: t\r\n\r\n"
            + "GET /items/3 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(try client.readResponse().text == "{\"id\":\"1\"}")
        #expect(try client.readResponse().text == "hello")
        #expect(try client.readResponse().text == "{\"id\":\"2\"}")
        let last = try client.readResponse()
        #expect(last.text == "{\"id\":\"3\"}")
        #expect(last.header("Connection") == "close")
        #expect(client.isClosedByServer())
        await server.shutdown()
    }

    @Test func chunkedUploadReachesTheHandlerWhole() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("PUT /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        try client.send("4\r\nabcd\r\n")
        try client.send("3;x=y\r\nefg\r\n0\r\nTrailer: 1\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "abcdefg")
        // The connection stays usable.
        try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        await server.shutdown()
    }

    /// Regression: a body that fills the read buffer exactly used to stop reading for good.
    @Test(arguments: [4096, 4096 * 3, 100_000])
    func bodiesLargerThanTheReadBufferStreamThrough(size: Int) async throws {
        let server = try TestServer(configure: { $0.readBufferBytes = 4096; $0.maxHeadBytes = 2048 }, routes: TestRoutes.standard)
        let client = try server.client()
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try client.send(Array("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(size)\r\n\r\n".utf8) + body)
        #expect(try client.readResponse().body == body)
        await server.shutdown()
    }

    @Test func continueIsSentWhenTheBodyWillBeRead() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse()
        #expect(interim.status == 100)
        try client.send("data")
        let final = try client.readResponse()
        #expect(final.status == 200)
        #expect(final.text == "data")
        await server.shutdown()
    }

    @Test func continueIsNotSentWhenTheAnswerComesFirst() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        // Over the route's limit: 413 at once, without reading (and without 100).
        let client = try server.client()
        try client.send("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999\r\nExpect: 100-continue\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.header("Connection") == "close")
        #expect(client.isClosedByServer())
        // A route that does not want the body: its answer, not 100.
        let other = try server.client()
        try other.send("PUT /nobody HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n")
        #expect(try other.readResponse().status == 202)
        #expect(other.isClosedByServer())
        await server.shutdown()
    }

    @Test func smallUnreadBodyIsDiscardedAndTheConnectionKept() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("PUT /nobody HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n0123456789GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 202)
        #expect(try client.readResponse().status == 200)
        await server.shutdown()
    }

    @Test func headerOverTheLimitIs431() async throws {
        let server = try TestServer(configure: { $0.maxHeadBytes = 1024; $0.readBufferBytes = 4096 }, routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "b", count: 2000))\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 431)
        #expect(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: [String: Any]] != nil)
        #expect(response.text.contains("\"code\":\"header_too_large\""))
        await server.shutdown()
    }

    @Test func chunkedBodyOverTheLimitIs413() async throws {
        let server = try TestServer(routes: { table in
            table.add(.put, "/small", bodyLimit: 8) { request in
                _ = try await request.body.collect(upTo: request.bodyLimit)
                return Response(status: .ok)
            }
        })
        let client = try server.client()
        try client.send("PUT /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.text.contains("payload_too_large"))
        await server.shutdown()
    }

    @Test func halfAHeaderTimesOutWith408WhileOthersAreServed() async throws {
        let server = try TestServer(configure: { $0.headerTimeoutMilliseconds = 300 }, routes: TestRoutes.standard)
        let slow = try server.client()
        try slow.send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Par")
        // Meanwhile another client is served, again and again.
        let other = try server.client()
        for _ in 0..<5 {
            try other.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try other.readResponse().status == 200)
        }
        let response = try slow.readResponse() // blocks until the 408 (bounded by the client timeout)
        #expect(response.status == 408)
        #expect(response.text.contains("\"retryable\":true"))
        #expect(slow.isClosedByServer())
        await server.shutdown()
    }

    @Test func idleKeepAliveConnectionsAreClosed() async throws {
        let server = try TestServer(configure: { $0.idleTimeoutMilliseconds = 200 }, routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        #expect(client.isClosedByServer()) // silently, no 408 for a connection with no request
        await server.shutdown()
    }

    @Test func stalledBodyTimesOutWith408() async throws {
        let server = try TestServer(configure: { $0.bodyTimeoutMilliseconds = 300 }, routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly a part")
        #expect(try client.readResponse().status == 408)
        await server.shutdown()
    }

    @Test func connectionsPastTheLimitGet503WithRetryAfter() async throws {
        let server = try TestServer(configure: { $0.maxConnections = 2; $0.retryAfterSeconds = 7 }, routes: TestRoutes.standard)
        let first = try server.client()
        let second = try server.client()
        // Both are served, so the server counts them as open.
        for client in [first, second] {
            try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        let third = try server.client()
        try third.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let refused = try third.readResponse()
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "7")
        #expect(refused.text.contains("\"code\":\"unavailable\""))
        #expect(refused.header("Connection") == "close")
        #expect(third.isClosedByServer())
        // The first two are still served.
        try first.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try first.readResponse().status == 200)
        await server.shutdown()
    }

    @Test func gracefulShutdownLetsARequestInFlightFinish() async throws {
        let release = ReleaseSignal()
        // A grace longer than every wait below: the test is about order, and under the whole
        // suite's load the default 10 s once ran out before the refusal was seen (CI).
        let server = try TestServer(configure: { $0.shutdownGraceMilliseconds = 60_000 }, routes: { table in
            table.add(.get, "/slow") { _ in
                await release.wait()
                return .json(.ok, Array("{\"done\":true}".utf8))
            }
            TestRoutes.standard(&table)
        })
        let inFlight = try server.client()
        try inFlight.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        let idle = try server.client()
        try idle.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try idle.readResponse().status == 200)
        try await release.waitUntilRegistered()

        // Started directly, not from a Task: blocking test reads may hold every pool thread.
        let stopped = Flag()
        let completion = AsyncStream<Void> { continuation in
            server.server.shutdown {
                stopped.set()
                continuation.finish()
            }
        }
        #expect(idle.isClosedByServer()) // idle connections are closed at once
        #expect(!stopped.isSet) // still waiting for the request in flight
        // No longer accepting: soon the connection itself is refused (a read time-out would not
        // do), while the request in flight still runs.
        let refusal = "connect: \(String(cString: strerror(ECONNREFUSED)))"
        try await waitUntil("new connections to be refused") {
            do {
                _ = try RawClient(port: server.port)
                return false
            } catch let failure as RawClient.Failure {
                return failure.description == refusal
            }
        }
        #expect(!stopped.isSet)
        release.release()
        let response = try inFlight.readResponse()
        #expect(response.status == 200)
        #expect(response.header("Connection") == "close")
        for await _ in completion {}
        #expect(stopped.isSet)
    }

    /// sendfile(2) cannot be told MSG_NOSIGNAL, so starting a server ignores SIGPIPE
    /// process-wide, whatever the host had set. Checked in a child process (toursd, started
    /// with every signal at its default), so this process's handlers are left alone.
    @Test func startingAServerIgnoresSIGPIPE() throws {
        // Started the same way, a child has SIGPIPE at its default (children inherit what
        // this process ignores): else the check below would pass for the wrong reason.
        let shell = try runCommand("/usr/bin/env", ["--default-signal", "/bin/sh", "-c", "grep SigIgn /proc/self/status"])
        let shellIgnored = try #require(UInt64(shell.out.dropFirst(7).trimmingCharacters(in: .whitespacesAndNewlines), radix: 16))
        try #require(shellIgnored & (1 << (UInt64(SIGPIPE) - 1)) == 0, "SIGPIPE is not at its default in a child: \(shell.out)")
        let daemon = try ToursdProcess(dataDir: testDirectory("sigpipe").path, defaultSignals: true)
        defer {
            daemon.signal(SIGKILL)
            _ = daemon.wait()
        }
        let status = try String(contentsOfFile: "/proc/\(daemon.process.pid)/status", encoding: .utf8)
        let ignored = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }.flatMap { UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) })
        #expect(ignored & (1 << (UInt64(SIGPIPE) - 1)) != 0, "SigIgn \(String(ignored, radix: 16))")
    }

    @Test func clientGoneMidFileDoesNotKillTheServer() async throws {
        let path = testDirectory("big").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 32 << 20)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = try TestServer(routes: { table in
            table.add(.get, "/big") { _ in
                Response(status: .ok, body: .file(FileRegion(fd: open(path, O_RDONLY), offset: 0, length: 32 << 20)))
            }
            TestRoutes.standard(&table)
        })
        for _ in 0..<3 {
            let client = try server.client()
            try client.send("GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
            var linger = linger(l_onoff: 1, l_linger: 0) // close with a reset, mid-transfer
            setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        }
        let after = try server.client()
        try after.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try after.readResponse().status == 200)
        await server.shutdown()
    }

    @Test func uploadsInProgressAreCounted() async throws {
        // A body timeout past the test's own: a test starved of its threads by the others (CI
        // saw 84 s) must not find the half-sent body cut by the 30 s default before it looks.
        let server = try TestServer(configure: { $0.bodyTimeoutMilliseconds = 300_000 }, routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        try await waitUntil("the upload to be counted") { server.server.metrics.bodiesInProgress == 1 }
        try client.send("defghij")
        #expect(try client.readResponse().text == "abcdefghij")
        #expect(server.server.metrics.bodiesInProgress == 0)
        await server.shutdown()
    }

    @Test func servesIPv6() async throws {
        let server = try TestServer(configure: { $0.host = "::1" }, routes: TestRoutes.standard)
        let result = try runCommand("/usr/bin/curl", ["-s", "--max-time", "10", "-g", "http://[::1]:\(server.port)/hello"])
        #expect(result.out == "{\"hello\":true}")
        await server.shutdown()
    }

    @Test func http10IsAnsweredAndClosed() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("GET /hello HTTP/1.0\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(client.isClosedByServer())
        let keepAlive = try server.client()
        try keepAlive.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try keepAlive.readResponse().header("Connection") == "keep-alive")
        try keepAlive.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try keepAlive.readResponse().status == 200)
        await server.shutdown()
    }

    @Test func headHasTheHeadersOfGetButNoBody() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try client.readResponse(bodyExpected: false)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "14")
        #expect(head.body.isEmpty)
        #expect(try client.readResponse().text == "{\"hello\":true}") // the next response starts right after the head
        await server.shutdown()
    }

    @Test func unknownRouteIs404AndWrongMethodIs405WithAllow() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n")
        let missing = try client.readResponse()
        #expect(missing.status == 404)
        #expect(missing.text.contains("\"code\":\"not_found\""))
        try client.send("DELETE /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let wrong = try client.readResponse()
        #expect(wrong.status == 405)
        #expect(wrong.header("Allow") == "GET, HEAD")
        await server.shutdown()
    }

    @Test func clientRequestIdIsEchoedAndABadOneReplaced() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Request-Id: abc-123\r\n\r\n")
        #expect(try client.readResponse().header("X-Request-Id") == "abc-123")
        try client.send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Request-Id: bad id!\r\n\r\n")
        let replaced = try client.readResponse().header("X-Request-Id")
        #expect(replaced != nil && replaced != "bad id!")
        await server.shutdown()
    }

    @Test func malformedRequestGets400AndClose() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let client = try server.client()
        try client.send("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(response.header("Connection") == "close")
        #expect(client.isClosedByServer())
        await server.shutdown()
    }

    @Test func fileAndChunkedResponses() async throws {
        let path = testDirectory("http-file").path
        let content = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(content)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = try TestServer(routes: { table in
            table.add(.get, "/file") { _ in
                Response(status: .ok, contentType: "application/octet-stream",
                         body: .file(FileRegion(fd: open(path, O_RDONLY), offset: 1000, length: 150_000)))
            }
            table.add(.get, "/chunks") { _ in
                Response(status: .ok, contentType: "text/plain", body: .chunked(CountingChunks(count: 5)))
            }
        })
        let client = try server.client()
        try client.send("GET /file HTTP/1.1\r\nHost: t\r\n\r\nGET /chunks HTTP/1.1\r\nHost: t\r\n\r\n")
        let file = try client.readResponse()
        #expect(file.body == Array(content[1000..<151_000]))
        let chunked = try client.readResponse()
        #expect(chunked.header("Transfer-Encoding") == "chunked")
        #expect(chunked.text == "chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n")
        await server.shutdown()
    }

    @Test func clientThatVanishesMidBodyEndsTheHandlersBodyWithAnError() async throws {
        let aborted = AbortProbe()
        let server = try TestServer(routes: { table in
            table.add(.put, "/upload", bodyLimit: 1 << 20, aborted.handler)
        })
        do {
            let client = try server.client()
            try client.send("PUT /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\npartial")
        } // closed here
        try await aborted.waitForAbort()
        await server.shutdown()
    }
}

extension LoopbackTests {
    /// Regression (epoll): an end of stream that arrives with the last bytes brings no new
    /// edge after a short read; the handler must still hear of it, every time.
    @Test func endOfStreamRightBehindTheDataIsSeen() async throws {
        for _ in 0..<20 {
            let aborted = AbortProbe()
            let server = try TestServer(routes: { table in
                table.add(.put, "/upload", bodyLimit: 1 << 20, aborted.handler)
            })
            let client = try server.client()
            try client.send("PUT /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\npartial")
            shutdown(client.fd, Int32(SHUT_WR))
            try await aborted.waitForAbort()
            await server.shutdown()
        }
    }
}

/// Lets a test hold a handler's answer until it says so.
final class ReleaseSignal: Sendable {
    private let state = Mutex<(waiter: CheckedContinuation<Void, Never>?, released: Bool)>((nil, false))

    /// Suspends the handler until `release` (at once if it came first).
    func wait() async {
        await withCheckedContinuation { continuation in
            let released = state.withLock { state -> Bool in
                if !state.released { state.waiter = continuation }
                return state.released
            }
            if released { continuation.resume() }
        }
    }

    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.released = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Waits (bounded) until a handler is waiting.
    func waitUntilRegistered() async throws {
        try await waitUntil("the handler to start") { state.withLock { $0.waiter != nil } }
    }
}

/// A flag set on one thread and read on another.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

/// Knows whether an upload handler saw its body end early.
final class AbortProbe: Sendable {
    private let aborted = Atomic<Bool>(false)

    /// Reads the body; notes when reading it fails (the client went away mid-body).
    var handler: RequestResponder {
        { [self] request in
            do {
                for try await _ in request.body {}
            } catch {
                aborted.store(true, ordering: .sequentiallyConsistent)
                throw error
            }
            return Response(status: .ok)
        }
    }

    func waitForAbort() async throws {
        try await waitUntil("the handler to see its body end early") { aborted.load(ordering: .sequentiallyConsistent) }
    }
}

final class CountingChunks: ChunkedBodySource, @unchecked Sendable {
    private var next = 0
    private let count: Int
    init(count: Int) { self.count = count }

    func nextChunk() throws -> [UInt8]? {
        guard next < count else { return nil }
        defer { next += 1 }
        return Array("chunk \(next)\n".utf8)
    }
}

