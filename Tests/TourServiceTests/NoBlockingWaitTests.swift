import Foundation
import Testing
import TestSupport
import TestTraits

/// Nothing on a request's way waits by blocking a thread: no semaphore, no group, no
/// condition, no blocking database or pool call, no sleep (`Task.sleep` suspends, it does not
/// block). The client library is held to the same: its blocking storage work runs on its own
/// thread (`SerialThread`), and nothing else in it waits. Only start-up
/// (`SyncService+Startup.swift`), the operator's tools (`Admin.swift`, the online backup) and the thread pools'
/// own idle threads may. The scan covers the HTTP layer, the service, and the SQLite layer
/// but for the blocking calls it defines for start-up.
@Suite(.hangGuard, .testThreads) struct NoBlockingWaitTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let forbidden = [
        "DispatchSemaphore", "DispatchGroup", ".wait(", "pthread_cond_wait", "sleep(", "Thread.sleep",
        "runAndWait", "readBlocking", "writeBlocking", "writeNow", ".sync {", ".sync(execute",
    ]

    /// Files allowed to block, and why.
    static let exempt: Set = [
        "NTTourService/Composition/SyncService+Startup.swift", // before the server listens
        "NTTourService/Composition/Admin.swift", // the operator's command-line tools
        "NTTourService/Composition/ServerStorage.swift", // opening and migrating the database: start-up and the tools
        "NTSQLiteDB/DatabasePool.swift", // defines writeNow, for those two (migrations)
        "NTSQLKit/SQLConnection.swift", // declares readBlocking and writeBlocking, for the same two
        "NTPostgresDB/PostgresStorage+Migrations.swift", // PostgreSQL's migrations, for the same two
        "NTSQLiteDB/OnlineBackup.swift", // toursd backup, a command of its own
        "NTSQLiteDB/EnteringWAL.swift", // opening a database: start-up, the tools, the client
        // Its idle threads sleep on their queue's condition; runAndWait (asserted off pool
        // threads) serves only the blocking calls above.
        "NTThreadPools/ThreadPool.swift",
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
        let text = try String(contentsOf: Self.root.appendingPathComponent("Sources/NTTourService/Composition/SyncService+Startup.swift"), encoding: .utf8)
        #expect(Self.forbidden.contains { text.contains($0) })
    }
}
