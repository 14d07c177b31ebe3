#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// An S3-compatible server of a test's own on a loopback port: `moto_server` (in memory) or
/// `rclone serve s3` on a directory of the test's, both from the project's .venv (`make deps`
/// installs them). `stop` ends it and holds its port (a client finds it refused, never another
/// test's server); `start` again brings it back on the same port (rclone's on the same
/// directory: its objects survive, its multipart uploads in progress do not).
public final class S3Server: @unchecked Sendable {
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case moto, rclone
        public var description: String { rawValue }
    }

    public let kind: Kind
    public private(set) var port: UInt16 = 0
    /// rclone's folder (one sub-folder per bucket).
    public let directory: String
    public let accessKey = "toursd-test"
    /// The secret it accepts (rclone checks it; moto takes any).
    public private(set) var secretKey = "toursd-test-secret"
    private var process: ChildProcess?
    /// The port while the server is stopped.
    private var held: PortReservation?

    public var endpoint: String { "http://127.0.0.1:\(port)" }
    /// What toursd and the AWS tools read.
    public var environment: [String: String] {
        ["AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey, "AWS_REGION": "us-east-1"]
    }

    private static let venv = ToursdProcess.packageRoot.appendingPathComponent(".venv/bin")

    public init(_ kind: Kind) throws {
        self.kind = kind
        directory = testDirectory("s3-\(kind)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try start()
    }

    deinit { stop() }

    /// Starts the server (again), on its port once it had one; `secretKey`: another secret
    /// it accepts from now on (the daemon's credentials rotated away under it).
    public func start(secretKey newSecret: String? = nil) throws {
        if let newSecret { secretKey = newSecret }
        held?.release()
        held = nil
        let address = "127.0.0.1:\(port)"
        let (executable, arguments) = switch kind {
        case .moto: (Self.venv.appendingPathComponent("moto_server").path, ["-H", "127.0.0.1", "-p", "\(port)"])
        case .rclone: (Self.venv.appendingPathComponent("rclone").path,
                       ["serve", "s3", "--addr", address, "--auth-key", "\(accessKey),\(secretKey)", "--config", "/dev/null", directory])
        }
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ToursdProcess.Failure(description: "\(executable) is missing: make deps installs it")
        }
        let process = try ChildProcess(executable, arguments, standardError: .pipe)
        // moto: " * Running on http://127.0.0.1:N"; rclone: "Starting s3 server on [http://127.0.0.1:N/]"
        let (port, seen) = process.awaitStandardError(seconds: 60) { seen -> UInt16? in
            guard let found = seen.range(of: "http://127.0.0.1:") else { return nil }
            let digits = seen[found.upperBound...].prefix { $0.isNumber }
            return seen[found.upperBound...].dropFirst(digits.count).first != nil ? UInt16(digits) : nil
        }
        guard let port else {
            process.kill()
            throw ToursdProcess.Failure(description: "\(kind) did not start; stderr: \(seen)")
        }
        self.port = port
        self.process = process
    }

    /// Ends the server at once (SIGKILL: as a store that goes away does) and waits for it.
    public func stop() {
        guard let process else { return }
        process.kill()
        self.process = nil
        held = try? PortReservation(port: port)
    }
}
