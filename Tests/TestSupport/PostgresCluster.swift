import Foundation

/// A PostgreSQL server of a test's own (Tests/postgres/cluster.sh: Debian's postgresql in a
/// temporary directory on a loopback port, run as the postgres user), stopped by `stop`.
public final class PostgresCluster: @unchecked Sendable {
    public let directory: String
    /// `postgresql://postgres@127.0.0.1:PORT`, without a database.
    public let url: String
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("postgres/cluster.sh").path

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(UUID().uuidString)").path
        let started = try runCommand("/bin/bash", [Self.script, "start", directory], timeoutSeconds: 120)
        guard started.status == 0, let line = started.out.split(separator: "\n").last, line.hasPrefix("postgresql://") else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "PostgreSQL did not start: \(started.err)"])
        }
        url = String(line)
    }

    /// A new, empty database's URL.
    public func database(_ name: String) throws -> String {
        let created = try runCommand("/usr/bin/psql", ["\(url)/postgres", "-qc", "CREATE DATABASE \(name)"], timeoutSeconds: 60)
        guard created.status == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot create database \(name): \(created.err)"])
        }
        return "\(url)/\(name)"
    }

    /// Stops the server (fast: sessions are cut) and starts it again on the same port.
    public func restart() throws { try control("restart") }
    /// Stops the server, keeping its data.
    public func down() throws { try control("down") }
    /// Starts it again after `down`, on the same port.
    public func up() throws { try control("up") }

    private func control(_ command: String) throws {
        let done = try runCommand("/bin/bash", [Self.script, command, directory], timeoutSeconds: 120)
        guard done.status == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "PostgreSQL \(command) failed: \(done.err)"])
        }
    }

    public func stop() {
        _ = try? runCommand("/bin/bash", [Self.script, "stop", directory], timeoutSeconds: 120)
    }
}
