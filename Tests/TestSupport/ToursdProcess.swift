#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The built toursd executable, started as operators start it, on an OS-chosen port.
public final class ToursdProcess {
    /// toursd (like every executable of the package) is built beside the test bundle.
    public static var executable: URL { builtExecutable("toursd") }

    public static func builtExecutable(_ name: String) -> URL { Bundle.main.bundleURL.appendingPathComponent(name) }

    /// The release build operators run (`make build`).
    public static var releaseExecutable: URL { packageRoot.appendingPathComponent(".build/release/toursd") }

    /// The package's root, where `make run` starts toursd (its migrations are under it).
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let process: ChildProcess
    public let port: UInt16
    public let dataDir: String

    /// Starts `toursd serve` on `port` (0: the OS picks) with `environment` added to its own,
    /// and waits (bounded) for its "listening on" line.
    /// `workingDirectory`: where it runs (the package's root, as `make run`, unless told).
    /// `descriptorLimit`: its RLIMIT_NOFILE (started through prlimit(1), which execs it).
    /// `defaultSignals`: every signal at its default, even one this process ignores (children
    /// inherit ignored signals; started through env(1) --default-signal, which execs it).
    public init(dataDir: String, port: UInt16 = 0, extra: [String] = [], environment: [String: String] = [:],
                workingDirectory: URL = ToursdProcess.packageRoot, descriptorLimit: Int? = nil, defaultSignals: Bool = false,
                executable: URL = ToursdProcess.executable) throws {
        self.dataDir = dataDir
        var command = [executable.path, "serve", "--port", String(port), "--data-dir", dataDir] + extra
        if let descriptorLimit { command = ["/usr/bin/prlimit", "--nofile=\(descriptorLimit):\(descriptorLimit)"] + command }
        if defaultSignals { command = ["/usr/bin/env", "--default-signal"] + command }
        process = try ChildProcess(command[0], Array(command.dropFirst()), environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 },
                                   workingDirectory: workingDirectory.path, standardError: .pipe)
        let (port, seen) = process.awaitStandardError(seconds: 30) { seen in
            // Whole lines only (the last may be half written when read).
            seen.split(separator: "\n", omittingEmptySubsequences: false).dropLast().first { $0.hasPrefix("listening on http://") }.flatMap { $0.split(separator: ":").last.flatMap { UInt16($0) } }
        }
        guard let port else {
            process.kill()
            throw Failure(description: "toursd did not start; stderr: \(seen)")
        }
        self.port = port
    }

    /// The token of the tenant toursd made on its first start (`<data-dir>/admin.token`).
    public var adminToken: String {
        get throws { try String(contentsOfFile: dataDir + "/admin.token", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    public func signal(_ number: Int32) { process.signal(number) }

    /// Waits up to `seconds` for the process to end; nil if it still runs (it is then killed).
    public func wait(seconds: Double) -> ChildProcess.Termination? {
        if let ended = process.waitUntilExit(seconds: seconds) { return ended }
        process.kill()
        return nil
    }

    /// Waits for the process to end; returns how.
    @discardableResult
    public func wait() -> ChildProcess.Termination { process.waitUntilExit() }
}
