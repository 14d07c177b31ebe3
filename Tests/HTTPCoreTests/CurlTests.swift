#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTHTTPCore

/// The server against the real curl, as users and libcurl-based clients will talk to it.
@Suite(.hangGuard, .testThreads) struct CurlTests {
    /// Runs curl with a bounded time; returns exit status, stdout and stderr.
    private func curl(_ arguments: [String], stdin: String? = nil) throws -> (status: Int32, out: String, err: String) {
        try runCommand("/usr/bin/curl", ["--max-time", "60"] + arguments, stdin: stdin)
    }

    private func uploadServer(into directory: String) throws -> TestServer {
        try TestServer(routes: { table in
            TestRoutes.standard(&table)
            table.add(.put, "/files/{name}", bodyLimit: 200 << 20) { request in
                let size = try await writeBody(request.body, to: directory + "/" + (request.parameter("name") ?? "x"))
                return .json(.created, Array("{\"size\":\(size)}".utf8))
            }
        })
    }

    private func makeFile(_ path: String, megabytes: Int) throws {
        var block = [UInt8](repeating: 0, count: 1 << 20)
        for index in block.indices { block[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8) }
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        for round in 0..<megabytes {
            block[0] = UInt8(truncatingIfNeeded: round) // no two megabytes alike
            handle.write(Data(block))
        }
        try handle.close()
    }

    private func sameContent(_ a: String, _ b: String) throws -> Bool {
        try runCommand("/usr/bin/cmp", ["-s", a, b]).status == 0
    }

    private func temporaryDirectory() throws -> String {
        let path = testDirectory("curl").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func getAndKeepAliveReuse() async throws {
        let server = try TestServer(routes: TestRoutes.standard)
        let url = "http://127.0.0.1:\(server.port)/hello"
        let result = try curl(["-sv", url, url])
        #expect(result.status == 0)
        #expect(result.out == "{\"hello\":true}{\"hello\":true}", "curl said: \(result.err)")
        #expect(result.err.contains("Re-using existing connection") || result.err.contains("Reusing existing connection"))
        await server.shutdown()
    }

    @Test func hundredMegabytePutWithContinueStreamsToDisk() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = directory + "/source"
        try makeFile(source, megabytes: 100)
        let server = try uploadServer(into: directory)
        let result = try curl(["-sv", "-T", source, "http://127.0.0.1:\(server.port)/files/big"])
        #expect(result.status == 0)
        #expect(result.err.contains("Expect: 100-continue"))
        #expect(result.err.contains("HTTP/1.1 100 Continue"))
        #expect(result.out == "{\"size\":104857600}")
        #expect(try sameContent(source, directory + "/big"))
        await server.shutdown()
    }

    @Test func chunkedPutFromStandardInput() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = directory + "/source"
        try makeFile(source, megabytes: 3)
        let server = try uploadServer(into: directory)
        let result = try curl(["-sv", "-T", "-", "http://127.0.0.1:\(server.port)/files/piped"], stdin: source)
        #expect(result.status == 0)
        #expect(result.err.contains("Transfer-Encoding: chunked"))
        #expect(result.out == "{\"size\":3145728}", "\(result.err)")
        #expect(try sameContent(source, directory + "/piped"))
        await server.shutdown()
    }
}
