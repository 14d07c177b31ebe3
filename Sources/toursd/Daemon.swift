#if canImport(Glibc)
import Glibc
#endif
import CNTLinux
import NTAPIModel
import Dispatch
import Foundation
import NTHTTPCore
import NTLogging
import NTServiceModel
import NTServiceStorage
import NTTourService
import NTThreadPools
import Synchronization

/// Runs toursd's subcommands: configuration, signals, the server. A plain (not main-actor)
/// type, since Dispatch handlers made in top-level code would be main-actor isolated and trap
/// when they run elsewhere.
enum Daemon {
    /// glibc serves a large allocation from its own mapping, given back when freed, until one
    /// such is freed: then it raises that threshold to the size freed (up to 32 MiB), and
    /// blocks that size (an image's pixels, a placeholder's) come from its per-thread arenas
    /// instead, which keep them after they are freed. A fixed threshold turns that off, so a
    /// daemon's memory returns toward idle when its work ends (measured in bench/uploads.sh).
    private static func keepFreedMemoryReturnable() {
        _ = nt_fix_mmap_threshold(128 * 1024)
    }

    static func main(_ arguments: [String]) -> Never {
        blockStopSignals()
        // Everything toursd creates (the database and its WAL, stored files, folders, a
        // backup) is its owner's alone: token hashes and tenants' data are not for other
        // local users.
        umask(0o077)
        keepFreedMemoryReturnable()
        let command: ToursdCommand
        do throws(ConfigError) {
            command = try ToursdCommand.parse(arguments, environment: ProcessInfo.processInfo.environment)
        } catch {
            writeToStandardError("toursd: \(error.message)\n")
            exit(2)
        }
        if case .serve(let config) = command { serve(config, arguments: arguments) }
        // Only serve stops gracefully; the short commands stop at once, by default.
        unblockStopSignals()
        Task {
            let failure = await ThreadPool.onThreadOfItsOwn(named: "command") { () async -> StartupError? in
                do throws(StartupError) {
                    try await run(command)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { fail(failure) }
            exit(0)
        }
        // The command runs on a thread of its own and ends the process; the main thread waits
        // here, its signals unblocked.
        dispatchMain()
    }

    private static func fail(_ error: StartupError) -> Never {
        writeToStandardError("toursd: \(error.message)\n")
        exit(1)
    }

    /// A command that ends (every one but serve).
    private static func run(_ command: ToursdCommand) async throws(StartupError) {
        switch command {
        case .serve:
            break // serve(_:arguments:), which never returns
        case .help(let text):
            print(text)
        case .version:
            print("toursd \(Release.version)")
        case .checkConfig(let config, let check):
            try checkConfig(config, check)
        case .migrate(let config, status: false):
            try await Admin.migrate(config, logger: try logger(config))
        case .migrate(let config, status: true):
            for migration in try await Admin.migrationStatus(config, logger: try logger(config)) {
                print("\(migration.fileName)\t\(migration.appliedAt.map { "applied \($0)" } ?? "pending")")
            }
        case .backup(let config, let destination):
            switch try Admin.backup(config, to: destination) {
            case .files(let linked, let copied, let dropped):
                print("backed up \(config.dataDir) into \(destination): the database, \(linked) files linked, \(copied) copied"
                      + (dropped > 0 ? ", \(dropped) not named by a row left out" : ""))
                print("serve it with: toursd serve --data-dir \(destination)")
            case .manifest(let objects):
                print("backed up \(config.dataDir) into \(destination): the database, and blobs.manifest naming its \(objects) objects in \(config.blobStore), each there")
                print("restored, it is a deployment of its own: to replace this one with it, toursd deployment adopt --data-dir \(destination), "
                      + "then toursd serve --data-dir \(destination) (docs/scale-out.md \"Backup and restore\")")
            case .dump(let objects):
                print("backed up PostgreSQL into \(destination)/toursd.dump, and blobs.manifest naming its \(objects) objects in \(config.blobStore), each there, of the same snapshot")
                print("restore it as docs/scale-out.md \"Backup and restore\" says")
            }
        case .copyBlobs(let config, let direction):
            let outcome = try await Admin.copyBlobs(config, direction, logger: try logger(config))
            let (from, into, serve) = switch direction {
            case .intoBucket(let bucket): (config.blobFolder, bucket, "the bucket set blobStore to \(bucket)")
            case .intoFolder(let bucket): (bucket, config.blobFolder, "the blob folder set blobStore to \"directory\"")
            }
            print("copied \(outcome.copied) blobs (\(outcome.bytes) bytes) from \(from) into \(into); \(outcome.present) there already with the same bytes")
            guard outcome.problems.isEmpty else {
                throw StartupError("\(outcome.problems.count) blobs were not copied:\n" + outcome.problems.joined(separator: "\n"))
            }
            print("every digest checked; to serve from \(serve)")
        case .createToken(let config, let tenant):
            let made = try await Admin.createToken(config, tenant: tenant, logger: try logger(config))
            print("token \(made.id) for tenant \(tenant); it is shown only this once:")
            print(made.token)
        case .listTokens(let config):
            print("id\ttenant\tcreated\tstate")
            for token in try await Admin.tokens(config, logger: try logger(config)) {
                print("\(token.id)\t\(token.tenant)\t\(token.createdAt)\t\(token.revoked ? "revoked" : "active")")
            }
        case .deployment(let config, .adopt):
            let adopted = try await Admin.adoptDeployment(config, logger: try logger(config))
            print("the database is now deployment \(adopted.now) (it was \(adopted.before ?? "none")), whose blob store this is; its daemons may "
                  + "remove what its rows do not name: no daemon of the deployment it replaces may serve any more")
        case .deployment(let config, .setKey):
            let key = try await Admin.setDeploymentKey(config, logger: try logger(config))
            print("the deployment's daemons now read \(key); every webhook endpoint needs a new secret, every unfinished upload its creation again")
        case .revokeToken(let config, let id):
            try await Admin.revokeToken(config, id: id, logger: try logger(config))
            print("token \(id) revoked")
        }
    }

    /// The log of `config`: its file (created when missing), else standard error.
    private static func logger(_ config: ToursdConfig) throws(StartupError) -> Logger {
        guard !config.logFile.isEmpty else { return Logger(level: config.level, format: config.format) }
        do throws(LogFileError) {
            return Logger(sink: try LogSink(path: config.logFile), level: config.level, format: config.format)
        } catch {
            throw StartupError(error.description)
        }
    }

    /// check-config: every key's effective value and where it came from, then whether it can
    /// be served: what serve refuses, and what it would meet (the database, the bucket).
    private static func checkConfig(_ config: ToursdConfig, _ check: ConfigCheck) throws(StartupError) {
        for (key, value) in config.printableValues { print("\(key) = \(value)" + (check.sources[key].map { "  (\($0))" } ?? "")) }
        var problems = Admin.refusals(config)
        if problems.isEmpty, let deployment = try? Deployment(config.storage) {
            let (found, unreachable) = Admin.reach(deployment, config)
            for line in found { print(line) }
            problems += unreachable
        }
        // What serve does first: the data directory made (as serve would), then the address bound.
        do throws(StartupError) {
            try StartupError.makeDirectories(config.dataDir)
            if !FileManager.default.isWritableFile(atPath: config.dataDir) { problems.append("dataDir \(config.dataDir) cannot be written") }
        } catch {
            problems.append("dataDir: \(error.message)")
        }
        if check.bind {
            do {
                try HTTPServer.checkListening(config.server)
            } catch {
                problems.append("cannot listen on \(config.host):\(config.port): \(error) (beside a running daemon, --no-bind)")
            }
        }
        if !config.logFile.isEmpty {
            let folder = (config.logFile as NSString).deletingLastPathComponent
            if !FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder) && !FileManager.default.isWritableFile(atPath: config.logFile) {
                problems.append("logFile \(config.logFile) cannot be written")
            }
        }
        guard problems.isEmpty else { throw StartupError("the configuration cannot be served: " + problems.joined(separator: "; ")) }
        print("configuration ok")
    }

    /// The descriptors the process has open (nil when /proc cannot be read).
    private static func openDescriptors() -> Int? {
        guard let folder = opendir("/proc/self/fd") else { return nil }
        defer { closedir(folder) }
        var entries = 0
        while readdir(folder) != nil { entries += 1 }
        return entries - 3 // ".", ".." and the listing's own
    }

    /// `TOURSD_CRASH_AT`: the step where tests have the daemon die (CrashPoint).
    private static func crashPoint() throws(StartupError) -> CrashPoint? {
        guard let name = ProcessInfo.processInfo.environment["TOURSD_CRASH_AT"] else { return nil }
        guard let point = CrashPoint(rawValue: name) else {
            throw StartupError("TOURSD_CRASH_AT \(name) is none of " + CrashPoint.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return point
    }

    /// Starts the service on a task while the main thread takes the stop and reload signals
    /// (`ServeSignals`: one that comes before the server listens is acted on once it does).
    private static func serve(_ config: ToursdConfig, arguments: [String]) -> Never {
        let serving = Serving(config: config)
        Task {
            do throws(StartupError) {
                let running = try await start(config)
                serving.state.withLock { state in
                    state.running = running
                    perform(state.signals.started(), running, &state.config, arguments: arguments)
                }
            } catch {
                fail(error)
            }
        }
        var signals = handledSignals
        while true {
            var received: Int32 = 0
            guard sigwait(&signals, &received) == 0 else { continue }
            serving.state.withLock { state in
                // An action comes only once the server listens; until then the signal is kept.
                guard let action = state.signals.received(received), let running = state.running else { return }
                perform([action], running, &state.config, arguments: arguments)
            }
        }
    }

    /// What serve holds while it runs: where its signals stand, the configuration in force, and
    /// the server once it listens. The main thread (a signal) and the start-up task (the server
    /// up) each act on it under its lock.
    private final class Serving: Sendable {
        struct State {
            var signals = ServeSignals()
            var config: ToursdConfig
            var running: Running?
        }

        let state: Mutex<State>

        init(config: ToursdConfig) { state = Mutex(State(config: config)) }
    }

    private struct Running {
        let server: HTTPServer
        let service: SyncService
        let logger: Logger
    }

    /// The service opened and its server listening.
    private static func start(_ config: ToursdConfig) async throws(StartupError) -> Running {
        // Before anything is created: a busy port or a wrong host makes no data directory,
        // tenant or token.
        do {
            try HTTPServer.checkListening(config.server)
        } catch {
            throw StartupError("cannot listen on \(config.host):\(config.port): \(error)")
        }
        let logger = try logger(config)
        let service = try await SyncService.open(try Deployment(config.storage), config: config, logger: logger, crashAt: try crashPoint())
        let metrics = ServerMetrics()
        var serverConfiguration = config.server
        // The process is this server's alone: what it holds once the service is open, and room
        // for what comes and goes besides connections (database reconnections, webhook
        // deliveries, the runtime's /proc reads).
        serverConfiguration.descriptorsKeptForOtherUse = openDescriptors().map { $0 + 16 + config.webhookConcurrency }
        let server = HTTPServer(configuration: serverConfiguration, router: service.makeRouter(metrics: metrics), metrics: metrics, logger: logger,
                                handlers: service.handlerThreads)
        let address: SocketAddress
        do {
            address = try server.start()
        } catch {
            throw StartupError("cannot listen on \(config.host):\(config.port): \(error)")
        }
        let ceiling = server.connectionsTheDescriptorLimitAllows
        if ceiling < config.maxConnections {
            logger.warn("the descriptor limit leaves room for fewer connections than maxConnections; raise it (ulimit -n, LimitNOFILE)",
                        ["maxConnections": String(config.maxConnections), "allowed": String(ceiling)])
        }
        logger.info("started", ["dataDir": config.dataDir, "maxConnections": String(min(config.maxConnections, ceiling))])
        // The line scripts and tests wait for; written whole, at once.
        writeToStandardError("listening on http://\(address)\n")
        return Running(server: server, service: service, logger: logger)
    }

    /// SIGTERM, SIGINT and SIGHUP are blocked in every thread from the first line of `main`
    /// (threads inherit the mask), and serve's main thread takes them with `sigwait`: a signal
    /// sent at any moment, even before the server listens, stays pending and is acted on; none
    /// is lost. (A Dispatch signal source, armed after the signal is ignored, drops one that
    /// arrives before it is registered; and `dispatchMain()` would unblock every signal on the
    /// main thread: only the short commands, which stop at once, wait in it.)
    static func blockStopSignals() {
        var signals = handledSignals
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    private static func unblockStopSignals() {
        var signals = handledSignals
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    private static var handledSignals: sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        return signals
    }

    /// SIGTERM or SIGINT: a graceful stop (drained first for `drainMs`: `/readyz` says so while
    /// requests are still served). SIGHUP: reload what can change live.
    private static func perform(_ actions: [ServeSignals.Action], _ running: Running, _ current: inout ToursdConfig, arguments: [String]) {
        let (server, logger) = (running.server, running.logger)
        for action in actions {
            switch action {
            case .reload:
                current = reload(current, server: server, logger: logger, arguments: arguments)
            case .alreadyStopping(let name):
                logger.info("already stopping", ["signal": name])
            case .stop(let name):
                logger.always(.info, "stopping", ["signal": name, "drainMs": String(current.drainMs)])
                running.service.beginDraining()
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(current.drainMs)) {
                    server.shutdown {
                        logger.info("stopped")
                        exit(0)
                    }
                }
            }
        }
    }

    /// Reads the configuration again (file, environment, flags) and applies what can change
    /// while serving: the log level, the connection limit and timeouts; reopens the log file.
    /// What needs a restart (where it listens, threads, buffers, body limits, the log format)
    /// is said in the log. A configuration that does not parse changes nothing.
    private static func reload(_ current: ToursdConfig, server: HTTPServer, logger: Logger, arguments: [String]) -> ToursdConfig {
        let new: ToursdConfig
        do throws(ConfigError) {
            guard case .serve(let parsed) = try ToursdCommand.parse(arguments, environment: ProcessInfo.processInfo.environment) else { return current }
            new = parsed
        } catch {
            logger.always(.error, "reload failed; the configuration is unchanged", ["error": error.message])
            return current
        }
        server.updateLimits(new.server)
        logger.level = new.level
        // What the log goes to after the reload: the file reopened, or, when it cannot be
        // opened, the one in use before (said as such, never as the path that failed).
        var logReopened = "no"
        if !new.logFile.isEmpty {
            do throws(LogFileError) {
                try logger.sink.reopen(path: new.logFile)
                logReopened = new.logFile
            } catch {
                logger.error("the log file could not be reopened; logging goes on where it went", ["error": error.description])
                logReopened = "failed"
            }
        }
        // What changed, applied or not; the configuration in force keeps the old values of the others.
        let changed = zip(current.values, new.values).filter { $0.value != $1.value }.map(\.0.key)
        let applied = changed.filter { ToursdConfig.liveKeys.contains($0) }
        let needRestart = changed.filter { !ToursdConfig.liveKeys.contains($0) }
        logger.always(.info, "reloaded", ["changed": applied.isEmpty ? "nothing" : applied.joined(separator: ","),
                                 "logReopened": logReopened,
                                 "needRestart": needRestart.isEmpty ? "nothing" : needRestart.joined(separator: ",")])
        var inForce = current
        for (key, value) in new.values where ToursdConfig.liveKeys.contains(key) { try? inForce.set(key, value) }
        return inForce
    }
}
