import Foundation
import Testing
import TestSupport
import TestTraits

/// Nothing waits by blocking a thread: no semaphore, no group, no condition, no blocking
/// database or pool call, no sleep (`Task.sleep` suspends, it does not block). Start-up and the
/// operator's tools are async too, on a thread of their own (`ThreadPool.onThreadOfItsOwn`); the
/// client library's blocking storage work runs on its own thread (`SerialThread`). Only SQLite's
/// bounded waits for another connection's lock, when a database is opened and in `toursd
/// backup`, may sleep. The scan covers the HTTP layer, the service, the storage layers, the
/// thread pools and the client.
@Suite(.hangGuard, .testThreads) struct NoBlockingWaitTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let forbidden = [
        "DispatchSemaphore", "DispatchGroup", ".wait(", "pthread_cond_wait", "sleep(", "Thread.sleep",
        "runAndWait", "readBlocking", "writeBlocking", "writeNow", ".sync {", ".sync(execute",
    ]

    /// Files allowed to block, and why.
    static let exempt: Set = [
        "NTSQLiteDB/OnlineBackup.swift", // toursd backup, a command of its own
        "NTSQLiteDB/EnteringWAL.swift", // opening a database: start-up, the tools, the client
    ]

    @Test func noRequestPathBlocksAThread() throws {
        var scanned = 0
        var found: [String] = []
        for module in ["NTHTTPCore", "NTServiceModel", "NTServiceStorage", "NTTourUseCases", "NTServiceHTTP", "NTUploads", "NTWebhooks", "NTViewerService",
                       "NTTourService", "NTSQLiteDB", "NTSQLKit", "NTPostgresDB", "NTThreadPools", "NoughtyTours"] {
            let directory = Self.root.appendingPathComponent("Sources/\(module)")
            for case let file as String in FileManager.default.enumerator(atPath: directory.path) ?? FileManager.DirectoryEnumerator()
            where file.hasSuffix(".swift") && !Self.exempt.contains("\(module)/\(file)") {
                scanned += 1
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = (line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                        .replacingOccurrences(of: "Task.sleep(", with: "")
                    for call in Self.forbidden where code.contains(call) {
                        found.append("\(module)/\(file):\(number + 1): \(call)")
                    }
                }
            }
        }
        #expect(scanned > 60) // the scan sees the sources
        #expect(found.isEmpty, "blocking waits on request paths: \(found)")
    }

    /// The scan finds what it looks for (it is not vacuous).
    @Test func theScanSeesABlockingCallWhereItIsAllowed() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("Sources/NTSQLiteDB/OnlineBackup.swift"), encoding: .utf8)
        #expect(Self.forbidden.contains { text.contains($0) })
    }
}
