#if canImport(Glibc)
import Glibc
#endif
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
import TestTraits
import NTObjectStorage
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTWebhooks

/// The built toursd executable, as operators and the other issues' checks use it.
@Suite(.hangGuard, .testThreads) struct ToursdBinaryTests {
    private var executable: URL { ToursdProcess.executable }

    @Test func servesOnAnOSChosenPortAndStopsWithExitZeroOnSIGTERM() async throws {
        let dataDir = testDirectory("toursd").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let toursd = try ToursdProcess(dataDir: dataDir)
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(toursd.port)/healthz")!)
        request.timeoutInterval = 10
        let (data, _) = try await URLSession.shared.data(for: request)
        #expect(String(decoding: data, as: UTF8.self) == #"{"status":"ok"}"#)
        #expect(FileManager.default.fileExists(atPath: dataDir)) // created on start
        toursd.signal(SIGTERM)
        let ended = toursd.wait()
        #expect(ended == .exited(0))
    }

    /// A stop sent the moment toursd says it listens (systemd may stop it at any time) is
    /// never lost: it stops gracefully, every time.
    @Test func aSIGTERMRightAfterStartIsNeverLost() throws {
        for _ in 0..<25 {
            let dataDir = testDirectory("toursd").path
            defer { try? FileManager.default.removeItem(atPath: dataDir) }
            let toursd = try ToursdProcess(dataDir: dataDir)
            toursd.signal(SIGTERM)
            let ended = toursd.wait(seconds: 10)
            #expect(ended == .exited(0))
        }
    }

    /// A stop that comes while toursd is still starting (here, in a migration that takes a
    /// while) is kept, not fatal and not dropped: toursd finishes starting, then stops
    /// gracefully.
    @Test func aSIGTERMWhileStartingIsActedOnOnceItListens() async throws {
        let dataDir = testDirectory("toursd").path
        let migrations = try ServiceHarness.migrations(
            adding: "9999_slow.sql", "CREATE TABLE slow AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000000) SELECT count(*) AS c FROM n;")
        defer {
            try? FileManager.default.removeItem(atPath: dataDir)
            try? FileManager.default.removeItem(atPath: migrations)
        }
        let toursd = try ChildProcess(executable.path, ["serve", "--port", "0", "--data-dir", dataDir],
                                      environment: ["PATH": "/usr/bin:/bin", "TOURSD_migrationsDir": migrations],
                                      workingDirectory: ToursdProcess.packageRoot.path, standardError: .pipe)
        defer { toursd.kill() } // when an expectation failed first; else it has ended
        // Sent once main has blocked the stop signals (before that, one is fatal by default).
        try await waitUntil("toursd's stop signals blocked") { Self.holdsSIGTERM(toursd.pid) }
        toursd.signal(SIGTERM)
        let before = toursd.awaitStandardError(seconds: 0) { $0.contains("listening on http://") ? true : nil }
        #expect(before.found == nil, "the stop came after toursd listened: \(before.seen)")
        let (listened, seen) = toursd.awaitStandardError(seconds: 60) { $0.contains("listening on http://") ? true : nil }
        #expect(listened == true, "\(before.seen)\(seen)")
        #expect(toursd.waitUntilExit(seconds: 30) == .exited(0))
    }

    /// Whether the process's main thread holds SIGTERM for itself: blocked (`SigBlk` of
    /// /proc/PID/status), or waited for in `sigwait` (which unblocks it while it waits).
    private static func holdsSIGTERM(_ pid: pid_t) -> Bool {
        if (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8))?.hasPrefix("do_sigtimedwait") == true { return true }
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
              let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        return mask & (1 << UInt64(SIGTERM - 1)) != 0
    }

    @Test func sighupReloadsTheLevelAndLimitsLiveAndReopensTheLog() async throws {
        let directory = testDirectory("reload").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/toursd.json", log = directory + "/toursd.log"
        let write = { (level: String, connections: Int) in
            try #"{"logLevel": "\#(level)", "logFile": "\#(log)", "maxConnections": \#(connections), "migrationsDir": "\#(ServiceHarness.migrationsDir)"}"#
                .write(toFile: config, atomically: true, encoding: .utf8)
        }
        try write("info", 100)
        let toursd = try ToursdProcess(dataDir: directory + "/data", extra: ["--config", config])
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("msg=started"))

        // Rotated away, the level and the connection limit changed: then SIGHUP.
        try FileManager.default.moveItem(atPath: log, toPath: log + ".1")
        // To "error": the reload's outcome is logged all the same (an operator asked for it).
        try write("error", 1)
        toursd.signal(SIGHUP)
        try await waitUntil("the reload to be logged in a new file") {
            (try? String(contentsOfFile: log, encoding: .utf8))?.contains("msg=reloaded") == true
        }
        let reloaded = try String(contentsOfFile: log, encoding: .utf8)
        #expect(reloaded.contains("changed=logLevel,maxConnections"))
        #expect(!(try String(contentsOfFile: log + ".1", encoding: .utf8)).contains("reloaded"))
        // The new limit is in force: with one connection held, the next one is refused.
        let held = try RawClient(port: toursd.port)
        #expect(try held.request("GET", "/healthz").status == 200)
        let refused = try RawClient(port: toursd.port).request("GET", "/healthz")
        #expect(refused.status == 503)

        // A file that no longer parses changes nothing, and says so.
        try "{not json".write(toFile: config, atomically: true, encoding: .utf8)
        toursd.signal(SIGHUP)
        try await waitUntil("the failed reload to be logged") {
            (try? String(contentsOfFile: log, encoding: .utf8))?.contains("reload failed") == true
        }
        toursd.signal(SIGTERM)
        #expect(toursd.wait(seconds: 10)?.status == 0)
    }

    /// SIGTERM with drainMs: /readyz says draining while requests are still served (a balancer
    /// checking it stops sending), then the daemon stops and exits 0.
    @Test func aSIGTERMDrainsFirstWhileReadyzSaysSo() async throws {
        let directory = testDirectory("drain").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/toursd.json"
        // Long enough that a test waiting its turn on a loaded run still polls while it drains.
        try #"{"drainMs": 4000, "migrationsDir": "\#(ServiceHarness.migrationsDir)"}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let toursd = try ToursdProcess(dataDir: directory + "/data", extra: ["--config", config])
        let ready = try RawClient(port: toursd.port).request("GET", "/readyz")
        #expect(ready.status == 200 && ready.text.contains("ready"))
        let started = ContinuousClock.now
        toursd.signal(SIGTERM)
        try await waitUntil("/readyz to say draining") {
            let answer = try RawClient(port: toursd.port).request("GET", "/readyz")
            return answer.status == 503 && answer.text.contains("draining")
        }
        // Still serving meanwhile: a new connection is accepted and answered.
        #expect(try RawClient(port: toursd.port).request("GET", "/healthz").status == 200)
        #expect(toursd.wait(seconds: 15)?.status == 0)
        #expect(ContinuousClock.now - started >= .milliseconds(4000))
    }

    @Test func checkConfigPrintsTheEffectiveValuesAndExitsByVerdict() throws {
        let good = try run(["check-config", "--data-dir", FileManager.default.temporaryDirectory.path + "/check-\(UUID().uuidString)",
                            "--port", "8123"])
        #expect(good.status == 0)
        #expect(good.out.contains("port = 8123") && good.out.contains("configuration ok"))
        let file = testDirectory("not-a-folder").path
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let unservable = try run(["check-config", "--data-dir", file + "/data"])
        #expect(unservable.status == 1)
        #expect(unservable.err.contains("cannot be served"))
        #expect(try run(["check-config", "--port", "x"]).status == 2)
    }

    /// check-config tries what serve will meet: each mistake an operator made (issue 47) exits 1
    /// naming it, and the good setup passes, beside the running daemon too.
    @Test func checkConfigTriesTheDatabaseAndTheBucketAndRunsBesideTheDaemon() throws {
        let base = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AWS_") && !$0.key.hasPrefix("TOURSD_") }
        let check = { (arguments: [String], environment: [String: String]) in
            try runCommand(self.executable.path, ["check-config", "--no-bind", "--data-dir", testDirectory("check").path] + arguments,
                           environment: base.merging(environment) { $1 })
        }
        // The database away.
        let away = try check([], ["TOURSD_databaseUrl": "postgresql://toursd@127.0.0.1:1/tours", "TOURSD_webhookKeyFile": testDirectory("check-key").path])
        #expect(away.status == 1 && away.err.contains("the database is unavailable"), "\(away.err)")
        // A bucket without credentials, then one that cannot be reached, its endpoint's source said.
        let bucket = ["TOURSD_blobStore": "s3://tours/check"]
        let anonymous = try check([], bucket)
        #expect(anonymous.status == 1 && anonymous.err.contains("AWS_ACCESS_KEY_ID"), "\(anonymous.err)")
        let keys = ["AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"]
        let unreachable = try check([], bucket.merging(keys) { $1 }.merging(["AWS_ENDPOINT_URL": "http://127.0.0.1:1"]) { $1 })
        #expect(unreachable.status == 1 && unreachable.err.contains("the bucket cannot be used"), "\(unreachable.err)")
        #expect(unreachable.out.contains("at http://127.0.0.1:1 (endpoint from AWS_ENDPOINT_URL)"), "\(unreachable.out)")
        // Credentials the bucket refuses, then the right ones.
        let server = try S3Server(.rclone)
        defer { server.stop() }
        _ = try BucketTransfer.open(try #require(try BucketSettings.resolve(blobStore: "s3://tours", endpoint: "", region: "", pathStyle: false,
                                                                        environment: server.environment)),
                                    timeouts: TransferTimeouts(connectMs: 2000, stallSeconds: 10)).create()
        let refused = try check([], bucket.merging(server.environment) { $1 }.merging(["AWS_SECRET_ACCESS_KEY": "wrong"]) { $1 })
        #expect(refused.status == 1 && refused.err.contains("credentials"), "\(refused.err)")
        let good = try check([], bucket.merging(server.environment) { $1 })
        #expect(good.status == 0 && good.out.contains("a probe object put and deleted") && good.out.contains("configuration ok"), "\(good.err)")
        #expect(good.out.contains("blobStore = s3://tours/check  (TOURSD_blobStore)"), "\(good.out)")
        // Beside a running daemon, on its own port and data directory: --no-bind passes, a bind does not.
        let dataDir = testDirectory("check-running").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let daemon = try ToursdProcess(dataDir: dataDir)
        defer { daemon.signal(SIGKILL); _ = daemon.wait(seconds: 10) }
        let beside = try runCommand(executable.path, ["check-config", "--no-bind", "--data-dir", dataDir, "--port", String(daemon.port)], environment: base)
        #expect(beside.status == 0, "\(beside.err)")
        let bound = try runCommand(executable.path, ["check-config", "--data-dir", dataDir, "--port", String(daemon.port)], environment: base)
        #expect(bound.status == 1 && bound.err.contains("--no-bind"), "\(bound.err)")
    }

    /// A role that does not own its database cannot make toursd's tables (PostgreSQL 15):
    /// check-config says so before serve meets it; the docs' SQL makes one that can.
    @Test func checkConfigTriesTheRolesPrivileges() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let setup = ["CREATE ROLE weak LOGIN", "CREATE DATABASE notweaks LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"]
        for statement in setup { #expect(try runCommand("/usr/bin/psql", ["\(cluster.url)/postgres", "-qc", statement]).status == 0) }
        let made = try runCommand("/usr/bin/psql", ["\(cluster.url)/postgres", "-q", "-v", "password='p'", "-f",
                                                   ServiceHarness.root.appendingPathComponent("config/postgresql/toursd-database.sql").path])
        #expect(made.status == 0, "\(made.err)")
        let base = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AWS_") && !$0.key.hasPrefix("TOURSD_") }
        let check = { (url: String) in
            try runCommand(self.executable.path, ["check-config", "--no-bind", "--data-dir", testDirectory("check-pg").path],
                           environment: base.merging(["TOURSD_databaseUrl": url, "TOURSD_webhookKeyFile": testDirectory("check-key").path]) { $1 })
        }
        let weak = try check(cluster.url.replacingOccurrences(of: "postgres@", with: "weak@") + "/notweaks")
        #expect(weak.status == 1 && weak.err.contains("may not create tables"), "\(weak.err)")
        let owner = try check(cluster.url.replacingOccurrences(of: "postgres@", with: "toursd:p@") + "/tours")
        #expect(owner.status == 0 && owner.out.contains("reached as toursd"), "\(owner.err)")
    }

    @Test func servesFromAnyWorkingDirectoryWithItsMigrationsBuiltIn() throws {
        let dataDir = testDirectory("from-root").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let daemon = try ToursdProcess(dataDir: dataDir, workingDirectory: URL(fileURLWithPath: "/"))
        defer { daemon.signal(SIGKILL); _ = daemon.wait(seconds: 10) }
        let client = try APIClient(port: daemon.port, token: try daemon.adminToken)
        #expect(try client.send("GET", "/healthz").status == 200)
        #expect(try client.putProperty(newID()).status == 201)
        // What it made is its owner's alone: folders 0700, files 0600.
        let (_, floorId) = try client.makeFloor()
        #expect(try client.putPanorama(newID(), floorId: floorId, bytes: ImageSignature.jpeg).status == 201)
        var made: [(String, Int)] = [(dataDir, 0o700)]
        for case let path as String in FileManager.default.enumerator(atPath: dataDir) ?? FileManager.DirectoryEnumerator() {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: dataDir + "/" + path, isDirectory: &isFolder)
            made.append((dataDir + "/" + path, isFolder.boolValue ? 0o700 : 0o600))
        }
        #expect(made.contains { $0.0.hasSuffix("toursd.sqlite") } && made.count > 6)
        for (path, mode) in made {
            let actual = ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int ?? -1) & 0o777
            #expect(actual == mode, "\(path) is \(String(actual, radix: 8)), not \(String(mode, radix: 8))")
        }
    }

    @Test func migrateStatusListsEachMigrationPendingThenAppliedAndAFolderErrorSaysWhatToDo() throws {
        let dataDir = testDirectory("status").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let files = ServerMigrations.sqlite.map(\.fileName)
        let before = try run(["migrate", "--status", "--data-dir", dataDir])
        #expect(before.status == 0)
        #expect(before.out.split(separator: "\n").map(String.init) == files.map { "\($0)\tpending" })
        #expect(try run(["migrate", "--data-dir", dataDir]).status == 0)
        let after = try run(["migrate", "--status", "--data-dir", dataDir]).out.split(separator: "\n")
        #expect(after.count == files.count)
        #expect(zip(after, files).allSatisfy { $0.hasPrefix("\($1)\tapplied 20") }, "\(after)")
        let missing = try run(["migrate", "--migrations-dir", dataDir + "/nowhere", "--data-dir", dataDir])
        #expect(missing.status != 0)
        #expect(missing.err.contains("nowhere") && missing.err.contains("No such file or directory") && missing.err.contains("migrationsDir empty"))
        #expect(!missing.err.contains("NSCocoaErrorDomain"))
    }

    /// Runs toursd to completion; returns its exit status, stdout and stderr.
    private func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try runCommand(executable.path, arguments)
    }

    @Test func badArgumentsExitTwoWithAMessage() throws {
        let result = try run(["--port", "nope"])
        #expect(result.status == 2)
        #expect(result.err.contains("invalid value \"nope\" for port"))
    }

    @Test func tokenCommandsCreateListAndRevokeForARunningDaemon() async throws {
        let dataDir = testDirectory("tokens").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let migrationsDir = ServiceHarness.migrationsDir
        let common = ["--data-dir", dataDir]
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("toursd-\(UUID().uuidString).json").path
        try #"{"migrationsDir": "\#(migrationsDir)"}"#.write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        #expect(try run(["migrate", "--config", config] + common).status == 0)
        let created = try run(["tokens", "create", "--tenant", "acme", "--config", config] + common)
        #expect(created.status == 0)
        let token = try #require(created.out.split(separator: "\n").last.map(String.init))
        #expect(token.hasPrefix("nt_"))
        let listed = try run(["tokens", "list", "--config", config] + common)
        #expect(listed.out.contains("\tacme\t"))
        #expect(!listed.out.contains(token)) // only hashes are kept
        let id = try #require(listed.out.split(separator: "\n").first { $0.contains("\tacme\t") }?.split(separator: "\t").first.map(String.init))

        let toursd = try ToursdProcess(dataDir: dataDir)
        let client = try APIClient(port: toursd.port, token: token)
        #expect(try client.send("GET", "/v1/properties").status == 200)
        #expect(try run(["tokens", "revoke", id, "--config", config] + common).status == 0)
        #expect(try client.send("GET", "/v1/properties").status == 401) // at once, for the running daemon
        #expect(try run(["tokens", "revoke", id, "--config", config] + common).status == 1) // already revoked: said, not silent
        #expect(try run(["tokens", "create", "--config", config] + common).status == 2) // no --tenant
        toursd.signal(SIGTERM)
        #expect(toursd.wait().status == 0)
    }

    @Test func helpExitsZero() throws {
        let result = try run(["serve", "--help"])
        #expect(result.status == 0)
        #expect(result.out.contains("usage: toursd"))
    }
}
