#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import HTTPCore
import Logging
import TourService

/// Runs toursd's subcommands: configuration, signals, the server. A plain (not main-actor)
/// type, since Dispatch handlers made in top-level code would be main-actor isolated and trap
/// when they run elsewhere.
enum Daemon {
    static func main(_ arguments: [String]) -> Never {
        blockStopSignals()
        let command: ToursdCommand
        do throws(ConfigError) {
            command = try ToursdCommand.parse(arguments)
        } catch {
            writeToStandardError("toursd: \(error.message)\n")
            exit(2)
        }
        // Only serve stops gracefully; the short commands stop at once, by default.
        if case .serve = command {} else { unblockStopSignals() }
        do throws(StartupError) {
            switch command {
            case .help(let text):
                print(text)
            case .serve(let config):
                try serve(config)
            case .migrate(let config):
                try Admin.migrate(config, logger: logger(config))
            case .createToken(let config, let tenant):
                let made = try Admin.createToken(config, tenant: tenant, logger: logger(config))
                print("token \(made.id) for tenant \(tenant); it is shown only this once:")
                print(made.token)
            case .listTokens(let config):
                print("id\ttenant\tcreated\tstate")
                for token in try Admin.tokens(config, logger: logger(config)) {
                    print("\(token.id)\t\(token.tenant)\t\(token.createdAt)\t\(token.revoked ? "revoked" : "active")")
                }
            case .revokeToken(let config, let id):
                try Admin.revokeToken(config, id: id, logger: logger(config))
                print("token \(id) revoked")
            }
        } catch {
            writeToStandardError("toursd: \(error.message)\n")
            exit(1)
        }
        exit(0)
    }

    private static func logger(_ config: ToursdConfig) -> Logger {
        Logger(level: config.level, format: config.format)
    }

    private static func serve(_ config: ToursdConfig) throws(StartupError) -> Never {
        let logger = logger(config)
        let service = try SyncService.open(config: config, logger: logger)
        let metrics = ServerMetrics()
        let server = HTTPServer(configuration: config.server, router: service.makeRouter(metrics: metrics), metrics: metrics, logger: logger)
        let address: SocketAddress
        do {
            address = try server.start()
        } catch {
            throw StartupError("cannot listen on \(config.host):\(config.port): \(error)")
        }
        logger.info("started", ["dataDir": config.dataDir, "maxConnections": String(config.maxConnections)])
        // The line scripts and tests wait for; written whole, at once.
        writeToStandardError("listening on http://\(address)\n")
        stopOnSignals(server: server, logger: logger)
    }

    /// SIGTERM and SIGINT are blocked in every thread from the first line of `main` (threads
    /// inherit the mask), and the main thread takes them with `sigwait`: a stop signal sent at
    /// any moment, even before the server listens, stays pending and is acted on; none is
    /// lost. (A Dispatch signal source, armed after the signal is ignored, drops one that
    /// arrives before it is registered; and `dispatchMain()` would unblock every signal on the
    /// main thread. Nothing here uses the main queue.)
    static func blockStopSignals() {
        var signals = stopSignals
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    private static func unblockStopSignals() {
        var signals = stopSignals
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    private static var stopSignals: sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        return signals
    }

    private static func stopOnSignals(server: HTTPServer, logger: Logger) -> Never {
        var signals = stopSignals
        var stopping = false
        while true {
            var received: Int32 = 0
            guard sigwait(&signals, &received) == 0 else { continue }
            let name = received == SIGTERM ? "SIGTERM" : "SIGINT"
            guard !stopping else {
                logger.info("already stopping", ["signal": name])
                continue
            }
            stopping = true
            logger.info("stopping", ["signal": name])
            server.shutdown {
                logger.info("stopped")
                exit(0)
            }
        }
    }
}
