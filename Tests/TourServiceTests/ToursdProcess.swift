#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The built toursd executable, started as operators start it, on an OS-chosen port.
final class ToursdProcess {
    /// toursd is built beside the test bundle.
    static var executable: URL { Bundle.main.bundleURL.appendingPathComponent("toursd") }

    struct Failure: Error, CustomStringConvertible { let description: String }

    let process: Process
    let port: UInt16
    private let stderr: Pipe

    /// Starts `toursd serve` and waits (bounded) for its "listening on" line.
    init(dataDir: String, extra: [String] = []) throws {
        process = Process()
        process.executableURL = Self.executable
        process.arguments = ["serve", "--port", "0", "--data-dir", dataDir] + extra
        process.environment = ["PATH": "/usr/bin:/bin"]
        process.currentDirectoryURL = URL(fileURLWithPath: ServiceHarness.migrationsDir).deletingLastPathComponent()
        stderr = Pipe()
        process.standardError = stderr
        try process.run()
        var seen = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let data = stderr.fileHandleForReading.availableData
            if data.isEmpty { break } // the process ended
            seen += String(decoding: data, as: UTF8.self)
            if let line = seen.split(separator: "\n").first(where: { $0.hasPrefix("listening on http://") }),
               let port = line.split(separator: ":").last.flatMap({ UInt16($0) }) {
                self.port = port
                drainInBackground()
                return
            }
        }
        process.terminate()
        throw Failure(description: "toursd did not start; stderr: \(seen)")
    }

    /// Keeps reading stderr so the daemon never blocks on a full pipe.
    private func drainInBackground() {
        let handle = stderr.fileHandleForReading
        Thread.detachNewThread { while !handle.availableData.isEmpty {} }
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to end; returns how.
    func wait() -> (reason: Process.TerminationReason, status: Int32) {
        process.waitUntilExit()
        return (process.terminationReason, process.terminationStatus)
    }
}
