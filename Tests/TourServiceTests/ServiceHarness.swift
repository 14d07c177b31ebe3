#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import NTHTTPCore
import NTHashing
import NTLogging
import TestSupport
import NTSQLKit
import NTSQLiteDB
import NTPostgresDB
import Synchronization
import NTObjectStorage
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// A toursd service on a fresh data directory, served on 127.0.0.1 with an OS-chosen port,
/// with two tenants ("alpha", "beta") and a token each.
final class ServiceHarness: @unchecked Sendable {
    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// For tests of SQLite itself (its files, its migrations): SQLite even when the run is on
    /// PostgreSQL.
    static func onSQLite(_ config: inout ToursdConfig) {
        config.databaseUrl = ""
        config.migrationsDir = migrationsDir
    }
    /// The SQLite migrations (the tests' database unless they say otherwise).
    static let migrationsDir = root.appendingPathComponent("migrations/sqlite").path

    /// A folder of its own (made here; the caller removes it) with the SQLite migrations and
    /// one more, `sql` in the file `fileName`.
    static func migrations(adding fileName: String, _ sql: String) throws -> String {
        let folder = testDirectory("migrations").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: migrationsDir) where name.hasSuffix(".sql") {
            try FileManager.default.copyItem(atPath: migrationsDir + "/" + name, toPath: folder + "/" + name)
        }
        try sql.write(toFile: folder + "/" + fileName, atomically: true, encoding: .utf8)
        return folder
    }

    let dataDir: String
    let config: ToursdConfig
    /// One daemon, or with TOURSD_TEST_BALANCED=N on PostgreSQL, N daemons (each on a data
    /// directory of its own, sharing the database and `<dataDir>/blobs`) behind nginx.
    let services: [SyncService]
    private let servers: [HTTPServer]
    /// The first daemon: its database and routes are every daemon's.
    var service: SyncService { services[0] }
    /// Where clients go: the only daemon, or the balancer in front of them all.
    let port: UInt16
    /// Each daemon's own port.
    let daemonPorts: [UInt16]
    /// The balancer's folder (Tests/postgres/balancer.sh), when there is one.
    private let balancer: String?
    private var balancerStopped = false
    let alpha: String
    let beta: String
    /// Where a bucket's AWS variables come from.
    let environment: [String: String]
    /// The time of day the daemons read: a test moves it on.
    let clock = ShiftedClock()

    /// `logFile`: where the service logs, at `logLevel` (else nowhere, errors only).
    /// `beforeEachFileJob` runs before every job of the service's file I/O pool (a slow disk).
    /// `alone`: one daemon even in a balanced run, for tests of what one daemon does by itself
    /// (its HTTP layer, its metrics, its files, its memory), which a balancer in front would
    /// answer for or spread over several.
    /// `environment`: the AWS variables a bucket is reached with (a test's own S3 store), else
    /// the process's.
    init(dataDir: String? = nil, logFile: String? = nil, logLevel: LogLevel = .error, alone: Bool = false,
         environment: [String: String] = ProcessInfo.processInfo.environment,
         configure: (inout ToursdConfig) -> Void = { _ in }, beforeEachFileJob: (@Sendable () -> Void)? = nil,
         storage: (any SQLStorage) -> any SQLStorage = { $0 }) async throws {
        let dataDir = dataDir ?? testDirectory("toursd").path
        self.dataDir = dataDir
        var config = ToursdConfig()
        config.port = 0
        config.dataDir = dataDir
        config.migrationsDir = Self.migrationsDir
        // Eight harnesses (24 daemons in a balanced run) run side by side in one process:
        // each with fewer threads than a daemon's defaults; a test that needs more says so.
        config.ioThreads = 2
        config.webhookConcurrency = 1
        config.s3TransferThreads = 2
        config.eventLoopThreads = 1
        config.databaseHandlerThreads = 1
        // TOURSD_TEST_POSTGRES (a server's URL, as Tests/postgres/cluster.sh prints it): each
        // harness on a database of its own there instead of SQLite.
        if let server = ProcessInfo.processInfo.environment["TOURSD_TEST_POSTGRES"], !server.isEmpty {
            config.databaseUrl = try Self.freshDatabase(on: server, for: dataDir)
            config.migrationsDir = Self.postgresMigrationsDir
            config.databasePoolSize = 2 // the tests run side by side: a few connections each
        }
        // TOURSD_TEST_S3 (set by Tests/s3/api.sh with the AWS variables of a store it started):
        // each harness's blobs in a bucket of its own there.
        if ProcessInfo.processInfo.environment["TOURSD_TEST_S3"]?.isEmpty == false {
            config.blobStore = try Self.freshBucket(for: dataDir, environment: environment)
        }
        configure(&config)
        let daemons = alone || config.databaseUrl.isEmpty ? 1 : Int(ProcessInfo.processInfo.environment["TOURSD_TEST_BALANCED"] ?? "") ?? 1
        if daemons > 1 {
            if config.blobDir.isEmpty { config.blobDir = dataDir + "/blobs" }
            config.maxConnectionsPerAddress = 0 // every client arrives from the balancer's address
            config.resumableInterimResponses = false // nginx 1.22 in front takes a 104 for the answer (docs/scale-out.md)
        }
        // On PostgreSQL a daemon reads a key every daemon could read (WebhookKey.checkShared).
        if !config.databaseUrl.isEmpty, config.webhookKeyFile.isEmpty, config.blobDir.isEmpty { config.webhookKeyFile = dataDir + "/webhook.key" }
        self.config = config
        self.environment = environment
        let logger = Logger(sink: LogSink(fd: open(logFile ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)), level: logLevel)
        // New tokens for the tenants (made on a first start, reused on a reopened directory).
        alpha = try await Admin.createToken(config, tenant: "alpha", logger: logger).token
        beta = try await Admin.createToken(config, tenant: "beta", logger: logger).token
        var services: [SyncService] = [], servers: [HTTPServer] = [], ports: [UInt16] = []
        for daemon in 0..<daemons {
            var own = config
            if daemon > 0 { own.dataDir = "\(dataDir)-daemon\(daemon)" }
            let service = try await SyncService.open(try Deployment(own.storage, environment: environment), config: own, logger: logger, beforeEachFileJob: beforeEachFileJob, storage: storage,
                                             clock: clock)
            let metrics = ServerMetrics()
            let server = HTTPServer(configuration: own.server, router: service.makeRouter(metrics: metrics), metrics: metrics, logger: logger,
                                    handlers: service.handlerThreads)
            ports.append(try server.start().port)
            (services, servers) = (services + [service], servers + [server])
        }
        (self.services, self.servers, daemonPorts) = (services, servers, ports)
        guard daemons > 1 else {
            (port, balancer) = (ports[0], nil)
            return
        }
        let folder = dataDir + "-nginx"
        let started = try runCommand("/bin/bash", [Self.root.appendingPathComponent("Tests/postgres/balancer.sh").path, "start", folder]
                                     + ports.map(String.init), timeoutSeconds: 60)
        guard started.status == 0, let balanced = UInt16(started.out.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "nginx did not start: \(started.err)"])
        }
        (port, balancer) = (balanced, folder)
    }

    /// The PostgreSQL migrations (a harness's database on PostgreSQL starts with them applied).
    static let postgresMigrationsDir = root.appendingPathComponent("migrations/postgresql").path

    /// A new database on a PostgreSQL server, named after the harness's directory (made with
    /// psql; a data directory reopened finds its database again), copied from the test
    /// process's migrated template: it starts on the newest schema, with no rows.
    static func freshDatabase(on server: String, for dataDir: String) throws -> String {
        let name = "t_" + String(dataDir.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init)).lowercased().suffix(40)
        let template = try migratedTemplate(on: server)
        let created = try runCommand("/usr/bin/psql", ["\(server)/postgres", "-qc", "CREATE DATABASE \(name) TEMPLATE \(template)"], timeoutSeconds: 60)
        guard created.status == 0 || created.err.contains("already exists") else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot create database \(name): \(created.err)"])
        }
        return "\(server)/\(name)"
    }

    /// This process's template on `server`, made and migrated by the first harness that asks
    /// (the others wait for it). No connection to it stays open: PostgreSQL copies a template
    /// only while nobody is connected to it.
    private static func migratedTemplate(on server: String) throws -> String {
        try templates.withLock { made throws -> String in
            if let name = made[server] { return name }
            let name = "t_template_\(getpid())"
            let created = try runCommand("/usr/bin/psql", ["\(server)/postgres", "-qc", "DROP DATABASE IF EXISTS \(name)", "-c", "CREATE DATABASE \(name)"],
                                         timeoutSeconds: 60)
            guard created.status == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot create database \(name): \(created.err)"])
            }
            let connection = try PostgresConnection(url: "\(server)/\(name)")
            _ = try PostgresMigrator.migrate(connection, Migrator.load(from: postgresMigrationsDir))
            made[server] = name
            return name
        }
    }

    private static let templates = Mutex<[String: String]>([:])

    /// A new bucket on the run's S3 store, named after the harness's directory (a data
    /// directory reopened finds its bucket again).
    static func freshBucket(for dataDir: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let name = "t-" + String(dataDir.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init)).lowercased().suffix(40)
        guard let settings = try BucketSettings.resolve(blobStore: "s3://\(name)", endpoint: "", region: "", pathStyle: false,
                                                        environment: environment) else { preconditionFailure("an s3:// store") }
        try BucketTransfer.open(settings, timeouts: TransferTimeouts(connectMs: 5000, stallSeconds: 30)).create()
        return "s3://\(name)"
    }


    /// A client speaking as one tenant (nil: no token).
    /// A client answered in process by the first daemon (no socket; see `InProcessClient`).
    func inProcess(_ token: String?) -> InProcessClient {
        InProcessClient(server: servers[0], token: token)
    }

    func client(_ token: String?) throws -> APIClient {
        try APIClient(port: port, token: token)
    }

    /// A client of the first daemon itself: /metrics is read there, never through a balancer
    /// (docs/scale-out.md: the balancer files keep it inside).
    func daemonClient(_ token: String?) throws -> APIClient {
        try APIClient(port: daemonPorts[0], token: token)
    }

    /// A test that fails before `finish` still stops its nginx (a process of its own).
    deinit { stopBalancer() }

    private func stopBalancer() {
        guard let balancer, !balancerStopped else { return }
        balancerStopped = true
        _ = try? runCommand("/bin/bash", [Self.root.appendingPathComponent("Tests/postgres/balancer.sh").path, "stop", balancer])
    }

    func stop() async {
        stopBalancer()
        for server in servers {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in server.shutdown { done.resume() } }
        }
        services.forEach { $0.stop() }
    }

    /// Stops and removes the data directories.
    func finish() async {
        await stop()
        for daemon in services.indices {
            try? FileManager.default.removeItem(atPath: daemon == 0 ? dataDir : "\(dataDir)-daemon\(daemon)")
        }
    }

    /// Every file under the data directory's blobs and tmp, relative to it (not the webhook
    /// key several daemons keep beside their shared blobs, nor the store's deployment claim).
    func storedFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: dataDir)
        var files = bucketObjects()
        while let path = enumerator?.nextObject() as? String {
            guard path.hasPrefix("blobs/") || path.hasPrefix("tmp/"), path != "blobs/." + WebhookKey.fileName,
                  path != "blobs/" + StoreOwnership.claimName else { continue }
            // In a bucket, an upload's local buffer stands for bytes its segments hold.
            if !config.blobStore.hasPrefix("s3://") || !path.hasSuffix(".partial") {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: dataDir + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(path)
            }
            }
        }
        return files.sorted()
    }

    /// Leaves a blob where the store keeps them (`<tenant>/<kind>/<name>`), as a failed
    /// removal would: in the blob folder, or in the bucket.
    func plant(_ key: String, _ bytes: Data) throws {
        if let settings = try BucketSettings.resolve(blobStore: config.blobStore, endpoint: config.s3Endpoint, region: "", pathStyle: false,
                                                     environment: environment) {
            let transfer = try BucketTransfer.open(settings, timeouts: TransferTimeouts(connectMs: 5000, stallSeconds: 30))
            try transfer.put(key, .bytes(Array(bytes)), contentType: "application/octet-stream")
        } else {
            let path = "\(config.blobFolder)/\(key)"
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try bytes.write(to: URL(fileURLWithPath: path))
        }
    }

    /// With a bucket, its objects as the blob folder would hold them (`blobs/<key>`; an
    /// upload's segments as its one partial file).
    private func bucketObjects() -> [String] {
        guard let settings = try? BucketSettings.resolve(blobStore: config.blobStore, endpoint: config.s3Endpoint, region: "", pathStyle: false,
                                                         environment: environment),
              let objects = try? BucketTransfer.open(settings, timeouts: TransferTimeouts(connectMs: 5000, stallSeconds: 30)).list("") else { return [] }
        return Array(Set(objects.filter { $0.key != StoreOwnership.claimName }.map { object in
            let parts = object.key.split(separator: "/")
            return "blobs/" + (parts.count == 4 && parts[1] == "uploads" ? parts.prefix(3).joined(separator: "/") : object.key)
        }))
    }
}

/// A tenant's request as both clients send it: its token, and a JSON body encoded.
enum TenantRequest {
    static func parts(token: String?, json: Any?, body: [UInt8], headers: [String: String]) throws -> (headers: [String: String], body: [UInt8]) {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        guard let json else { return (headers, body) }
        headers["Content-Type"] = headers["Content-Type"] ?? "application/json"
        return (headers, Array(try JSONSerialization.data(withJSONObject: json)))
    }
}

/// Requests as one tenant answered in process by a harness's first daemon
/// (`HTTPServer.respond(toMessage:)`): no socket, and nothing blocks a thread, so a test of
/// what the API accepts and refuses waits on nothing but the service. Bodies are bytes or
/// JSON; an answer's body is read when it is in memory (JSON, errors).
struct InProcessClient {
    let server: HTTPServer
    let token: String?

    func send(_ method: String, _ target: String, json: Any? = nil, body: [UInt8] = [], headers: [String: String] = [:]) async throws -> RawClient.Response {
        let (headers, bytes) = try TenantRequest.parts(token: token, json: json, body: body, headers: headers)
        var head = "\(method) \(target) HTTP/1.1\r\nHost: toursd\r\nContent-Length: \(bytes.count)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        let answer = await server.respond(toMessage: Array((head + "\r\n").utf8) + bytes)
        var fields = answer.headers.map { (name: $0.name, value: $0.value) }
        if let type = answer.contentType { fields.append((name: "Content-Type", value: type)) }
        guard case .bytes(let content) = answer.body else {
            if case .empty = answer.body { return RawClient.Response(status: answer.status.code, headers: fields, body: []) }
            throw RawClient.Failure(description: "\(method) \(target): an in-process answer's body is read only when it is in memory")
        }
        return RawClient.Response(status: answer.status.code, headers: fields, body: content)
    }
}

/// Requests as one tenant over one keep-alive connection.
final class APIClient {
    private var raw: RawClient
    private let port: UInt16, timeoutSeconds: Int
    let token: String?

    init(port: UInt16, token: String?, timeoutSeconds: Int = 20) throws {
        raw = try RawClient(port: port, timeoutSeconds: timeoutSeconds)
        (self.port, self.timeoutSeconds, self.token) = (port, timeoutSeconds, token)
    }

    @discardableResult
    func send(_ method: String, _ target: String, json: Any? = nil, body: [UInt8] = [], headers: [String: String] = [:]) throws -> RawClient.Response {
        let (headers, bytes) = try TenantRequest.parts(token: token, json: json, body: body, headers: headers)
        // A connection the server closed while it sat idle is made again before it is used, as
        // HTTP clients do: on a loaded run a test may wait past the idle timeout for its turn
        // on Swift's shared threads. A connection closed during a request still fails the test.
        if raw.wasClosedWhileIdle() { raw = try RawClient(port: port, timeoutSeconds: timeoutSeconds) }
        return try raw.request(method, target, headers: headers, body: bytes)
    }
}

/// Fresh lowercase UUIDs for ids.
func newID() -> String { UUID().uuidString.lowercased() }

/// The SHA-256 of bytes as Repr-Digest wants it.
func reprDigest(_ bytes: [UInt8]) -> String {
    "sha-256=:\(Data(sha256(bytes)).base64EncodedString()):"
}

func sha256(_ bytes: [UInt8]) -> [UInt8] {
    StreamingDigest.hash(.sha256, bytes)
}

enum StreamingDigestSHA1 {
    static func hash(_ bytes: [UInt8]) -> [UInt8] { StreamingDigest.hash(.sha1, bytes) }
}

func sha256Hex(_ bytes: [UInt8]) -> String {
    ByteEncoding.hex(sha256(bytes))
}

/// Deterministic test bytes of a given size (an "image"): `signature` (a JPEG's by default:
/// the server checks it), then a 64 KiB pattern tiled, each tile marked with its index and the
/// seed, so no two tiles or seeds are alike. Built by copying, which stays fast in debug builds.
func imageBytes(_ count: Int, seed: UInt8 = 1, signature: [UInt8] = ImageSignature.jpeg) -> [UInt8] {
    var bytes = patternBytes(count, seed: seed)
    bytes.replaceSubrange(0..<min(signature.count, count), with: signature.prefix(count))
    return bytes
}

private func patternBytes(_ count: Int, seed: UInt8) -> [UInt8] {
    let tileSize = 65_536
    var tile = [UInt8](repeating: 0, count: tileSize)
    for index in 0..<tileSize { tile[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 9) ^ seed }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    var tileIndex: UInt32 = 0
    while bytes.count < count {
        withUnsafeBytes(of: tileIndex.littleEndian) { tile.replaceSubrange(0..<4, with: $0) }
        tile[4] = seed
        bytes.append(contentsOf: tile.prefix(count - bytes.count))
        tileIndex += 1
    }
    return bytes
}
