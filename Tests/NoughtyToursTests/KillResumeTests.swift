#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NTSQLiteDB
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// A SyncWorker process (a client draining a storage directory), read line by line; killed
/// after 60 s at the latest, so no read can hang.
private final class WorkerProcess {
    let process: ChildProcess
    private let output: FileHandle
    private var buffer = ""
    private let watchdog: Watchdog

    init(server: URL, token: String, storage: URL, maxSendBytesPerSecond: Int64 = 0, resumableThreshold: Int64) throws {
        process = try ChildProcess(ToursdProcess.builtExecutable("SyncWorker").path,
                                   ["drain", server.absoluteString, token, storage.path, String(maxSendBytesPerSecond), String(resumableThreshold)],
                                   standardOutput: .pipe, standardError: .inherit)
        output = process.standardOutput!
        watchdog = Watchdog(process, seconds: 60)
    }

    deinit { watchdog.cancel() }

    /// The next line, or nil once the process closed its output.
    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: "\n") {
                let line = String(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            let data = output.availableData
            if data.isEmpty { return nil }
            buffer += String(decoding: data, as: UTF8.self)
        }
    }
}

@Suite(.serialized, .hangGuard, .testThreads) struct KillResumeTests {
    @Test func aClientKilledMidDrainFinishesAtItsNextStartWithoutDuplicatesAndResumesTheLargePanorama() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        // Every byte the clients send passes the proxy, which counts it.
        let proxy = try FaultProxy(upstreamPort: server.port)
        defer { proxy.stop() }
        let proxied = URL(string: "http://127.0.0.1:\(proxy.port)")!
        let storage = testDirectory("client")
        let largeSize = 24 << 20, threshold: Int64 = 1 << 20

        // Captured while offline, in this process.
        let (property, large): (Property, String)
        do {
            let tours = try await makeSyncingLibrary(server: proxied, token: server.token, directory: storage)
            property = try await tours.properties.createProperty(name: "Killed", floorCount: 1)
            let floor = try #require(try await tours.properties.floors(of: property).first)
            let session = try await tours.panoramaCapture.session(floor: floor)
            try await capturePanorama(session, bytes: 4_096, seed: 5)
            large = try await capturePanorama(session, bytes: largeSize, seed: 11)
        }

        // A client draining it is killed a third of the way into the large panorama (its
        // sending slowed so that the moment is not missed).
        let first = try WorkerProcess(server: proxied, token: server.token, storage: storage,
                                      maxSendBytesPerSecond: 12 << 20, resumableThreshold: threshold)
        var killedAt: Int64?
        var forwardedAtKill = 0
        while let line = first.nextLine() {
            let parts = line.split(separator: " ")
            if parts.count == 4, parts[0] == "progress", parts[1] == large, let sent = Int64(parts[2]), sent >= Int64(largeSize / 3) {
                first.process.kill()
                killedAt = sent
                forwardedAtKill = proxy.bytesForwarded
                break
            }
        }
        #expect(killedAt != nil)
        #expect(first.process.termination == .signalled(SIGKILL))
        // The server keeps what reached it once it sees the connection end (docs/api.md: an older
        // PATCH keeps only what it had fsynced when a newer one takes over, so a client back
        // before that resumes from the last fsync). Waited for: its database says so.
        let serverDatabase = try Database(path: server.dataDir + "/toursd.sqlite")
        try await waitUntil("the server to record the interrupted upload") {
            (try serverDatabase.first(#"SELECT "offset" FROM uploads WHERE panorama_id = ?"#, large)?.decode(0, as: Int64.self) ?? 0) > 0
        }

        // Started again: the queue finishes, continuing the large panorama from the server's offset.
        let second = try WorkerProcess(server: proxied, token: server.token, storage: storage, resumableThreshold: threshold)
        var resumedFrom: Int64?
        var lastLine = ""
        while let line = second.nextLine() {
            lastLine = line
            let parts = line.split(separator: " ")
            if resumedFrom == nil, parts.count == 4, parts[1] == large, let sent = Int64(parts[2]) { resumedFrom = sent }
        }
        #expect(second.process.waitUntilExit() == .exited(0))
        #expect(lastLine == "idle")
        // Not from byte zero: from about what had reached the server. The second client sent
        // less than the panorama by at least half of what the first one had got through
        // (a restart from byte zero would send all of it again).
        #expect((resumedFrom ?? 0) >= Int64(forwardedAtKill / 2), "resumed from \(resumedFrom ?? 0), \(forwardedAtKill) bytes had passed")
        let resent = proxy.bytesForwarded - forwardedAtKill
        #expect(resent < largeSize - forwardedAtKill / 2, "\(resent) bytes sent again after \(forwardedAtKill) had passed")
        #expect(proxy.bytesForwarded > largeSize)
        #expect(try server.json("/v1/properties/\(property.id)/status")["panoramaCount"] as? Int == 2)
        let tours = try await makeSyncingLibrary(server: proxied, token: server.token, directory: storage)
        let status = try await tours.properties.status(of: property)
        #expect(status.isComplete && status.panoramasUploaded == 2)
        #expect(try await queueItems(tours).allSatisfy { $0.state == "done" })
        let tourId = try #require(status.tourId).uuidString.lowercased()
        #expect(TourContent.server(try server.json("/v1/tours/\(tourId)")) == (try await TourContent.local(tours, property)))
    }
}
