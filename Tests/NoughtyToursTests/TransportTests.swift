#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// A port that accepts connections (the kernel completes them) and never answers.
private final class SilentListener {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            throw ToursdProcess.Failure(description: "bind: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }

    /// Answers each request with "100 Continue", then (when `afterBody`) reads the body and
    /// sends `partial`, the first bytes of a final answer, then closes: an answer cut short
    /// after its interim part.
    func answerContinueThenClose(afterBody: Bool, partial: String) {
        let fd = self.fd
        Thread.detachNewThread {
            for _ in 0..<100 {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 65_536)
                _ = recv(connection, &buffer, buffer.count, 0)
                let interim = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
                _ = send(connection, interim, interim.count, Int32(MSG_NOSIGNAL))
                if afterBody {
                    _ = recv(connection, &buffer, buffer.count, 0)
                    let bytes = Array(partial.utf8)
                    _ = send(connection, bytes, bytes.count, Int32(MSG_NOSIGNAL))
                }
                close(connection)
            }
        }
    }
}

@Suite(.hangGuard, .testThreads) struct TransportTests {
    @Test func aServerThatNeverAnswersIsGivenUpAtTheLowSpeedLimitAndTheItemFailsAfterThreeAttempts() async throws {
        let silent = try SilentListener()
        var options = fastSync()
        options.lowSpeedBytesPerSecond = 1000
        options.lowSpeedTime = .seconds(1)
        let tours = try await makeSyncingLibrary(server: URL(string: "http://127.0.0.1:\(silent.port)")!, token: "t", options: options)
        let property = try await tours.properties.createProperty(name: "Stalled", floorCount: 1)
        let events = EventLog(tours)
        try await tours.start()
        await tours.idle()
        await tours.stop()
        #expect(try await queueItems(tours, kind: .property).map { [$0.state, String($0.attempts)] } == [["failed", "3"]])
        #expect(try await tours.properties.status(of: property).sync == .failed)
        try await events.waitFor("three failed attempts to be reported") { $0.filter(EventLog.isFailedAttempt).count >= 3 }
        let failures = events.all.compactMap { event -> NoughtyToursError? in if case .attemptFailed(_, let error, _, _) = event { error } else { nil } }
        #expect(failures.count == 3)
        #expect(failures.allSatisfy { if case .transport(let reason) = $0 { reason.lowercased().contains("timeout") } else { false } })
    }

    /// Connections are reused: a drain of many items opens no more of them than transfers run
    /// at once, and does run several at once (counted by a proxy that tunnels each connection
    /// as it is).
    @Test func aDrainReusesItsConnections() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let proxy = try FaultProxy(upstreamPort: server.port, tunnels: true)
        defer { proxy.stop() }
        var options = fastSync()
        options.concurrentTransfers = 3
        // Slowed so that transfers last long enough to overlap on a loaded machine.
        options.maxSendBytesPerSecond = 256 << 10
        let tours = try await makeSyncingLibrary(server: URL(string: "http://127.0.0.1:\(proxy.port)")!, token: server.token, options: options)
        let property = try await tours.properties.createProperty(name: "Reused", floorCount: 2)
        for floor in try await tours.properties.floors(of: property) {
            let session = try await tours.panoramaCapture.session(floor: floor)
            for seed in 1...6 { try await capturePanorama(session, bytes: 50_000, seed: seed) }
        }
        try await tours.start()
        await tours.idle()
        await tours.stop()
        let left = try await tours.store.read { db in
            try db.query("SELECT kind, state, attempts, last_error FROM queue_items WHERE state != 'done'").map { $0.values.map { "\($0)" }.joined(separator: " ") }
        }
        #expect(left.isEmpty, "not uploaded: \(left)")
        #expect(try await queueItems(tours).count == 15) // the property, 2 floors, 12 panoramas
        #expect(proxy.connectionsAccepted >= 1 && proxy.connectionsAccepted <= 3, "\(proxy.connectionsAccepted) connections for 15 transfers")
        // Several at once: libcurl opens a second connection only while the first is busy.
        #expect(proxy.mostOpenAtOnce >= 2, "at most \(proxy.mostOpenAtOnce) connection open at a time")
    }

    @Test func aTokenTheServerRefusesFailsTheItemOnItsFirstAttempt() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let tours = try await makeSyncingLibrary(server: server.url, token: "nt_not-a-token")
        let property = try await tours.properties.createProperty(name: "Refused", floorCount: 1)
        let events = EventLog(tours)
        try await tours.start()
        await tours.idle()
        await tours.stop()
        #expect(try await queueItems(tours, kind: .property).map { [$0.state, String($0.attempts)] } == [["failed", "1"]])
        #expect(try await tours.properties.status(of: property).sync == .failed)
        try await events.waitFor("the failed attempt to be reported") { $0.contains(where: EventLog.isFailedAttempt) }
        let failure = events.all.first(where: EventLog.isFailedAttempt)
        guard case .attemptFailed(let item, .server(401, "unauthorized", _), 1, false)? = failure else {
            Issue.record("expected a 401 on the first attempt, got \(String(describing: failure))")
            return
        }
        #expect(item.kind == .property && item.entityId == property.id)
    }

    @Test(arguments: [(false, "", 2 << 20), (true, "HTTP/1.1 20", 2_000), (true, "", 2_000), (true, "", 100)])
    func anAnswerCutAfterItsInterimPartIsATransportFailure(afterBody: Bool, partial: String, size: Int) async throws {
        let server = try SilentListener()
        server.answerContinueThenClose(afterBody: afterBody, partial: partial)
        let file = try recordedFolder(bytes: size, name: "body.bin").appendingPathComponent("body.bin")
        let transport = try CurlMulti(connectionsPerHost: 1)
        defer { transport.shutdown() }
        let request = HTTPRequest("PUT", "http://127.0.0.1:\(server.port)/v1/panoramas/x", headers: [("Content-Type", "image/jpeg")],
                                  body: .file(path: file.path, offset: 0, length: Int64(size)))
        let result = await transport.perform(request, limits: fastSync().limits)
        guard case .failure(.transport) = result else {
            Issue.record("an answer cut after its interim part came back as \(result)")
            return
        }
    }
}
