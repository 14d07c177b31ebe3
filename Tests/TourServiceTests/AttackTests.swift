#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The daemon as an attacker on the network finds it (issue "Hold under attack"), one test per
/// finding, against the built toursd.
@Suite struct AttackTests {
    /// Out of descriptors, a new client is told 503 (a descriptor kept in reserve accepts it),
    /// not left hanging in the backlog; the daemon lives on and serves once they are back.
    @Test func outOfDescriptorsNewClientsGet503AndTheDaemonRecovers() async throws {
        let dataDir = testDirectory("fd-limit").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let daemon = try ToursdProcess(dataDir: dataDir, descriptorLimit: 64)
        defer { daemon.signal(SIGKILL); _ = daemon.wait(seconds: 10) }
        var held: [RawClient] = []
        var refused = 0
        // Bounded: 100 connections against 64 descriptors, each asked for /healthz.
        for _ in 0..<100 {
            guard let client = try? RawClient(port: daemon.port, timeoutSeconds: 3) else { continue }
            try? client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            if let response = try? client.readResponse(), response.status == 503 {
                #expect(String(decoding: response.body, as: UTF8.self).contains("out of file descriptors"))
                #expect(response.header("Retry-After") != nil)
                refused += 1
            } else {
                held.append(client)
            }
        }
        #expect(refused > 0, "no client was told 503")
        #expect(daemon.process.isRunning)
        held.removeAll()
        // Descriptors back: served again (bounded wait for the closes to be seen).
        try await waitUntil("/healthz answers 200 again") {
            guard let client = try? RawClient(port: daemon.port, timeoutSeconds: 3) else { return false }
            return (try? client.request("GET", "/healthz"))?.status == 200
        }
    }
}
