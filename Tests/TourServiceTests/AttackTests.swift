#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
@testable import TourService

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

    /// One client held every connection slot with idle sockets (security finding): each
    /// address now has its share, `maxConnectionsPerAddress`.
    @Test func oneAddressCannotHoldMoreThanItsShareOfConnections() async throws {
        let harness = try ServiceHarness { $0.maxConnectionsPerAddress = 4 }
        var held = try (0..<4).map { _ in try harness.client(harness.alpha) }
        for client in held { #expect(try client.send("GET", "/v1/properties").status == 200) }
        let fifth = try harness.client(harness.alpha)
        let refused = try fifth.send("GET", "/v1/properties")
        #expect(refused.status == 503)
        #expect(refused.json.flatMap { ($0["error"] as? [String: Any])?["message"] as? String } == "too many connections from your address")
        #expect(refused.header("Retry-After") != nil)
        // A connection given back is a slot again (bounded wait for the close to be seen).
        held.removeLast()
        try await waitUntil("a slot is free again") {
            (try? harness.client(harness.alpha).send("GET", "/v1/properties"))?.status == 200
        }
        await harness.finish()
    }
}
