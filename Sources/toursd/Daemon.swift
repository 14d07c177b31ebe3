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
        let command: ToursdCommand
        do throws(ConfigError) {
            command = try ToursdCommand.parse(arguments)
        } catch {
            writeToStandardError("toursd: \(error.message)\n")
            exit(2)
        }
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
        dispatchMain()
    }

    private static func stopOnSignals(server: HTTPServer, logger: Logger) {
        let queue = DispatchQueue(label: "toursd.signals")
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN) // delivered to the source instead
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler {
                logger.info("stopping", ["signal": signalNumber == SIGTERM ? "SIGTERM" : "SIGINT"])
                server.shutdown {
                    logger.info("stopped")
                    exit(0)
                }
            }
            source.resume()
            retainedSignalSources.append(source)
        }
    }

    // Sources must outlive this function; only touched on the main thread at start-up.
    nonisolated(unsafe) private static var retainedSignalSources: [DispatchSourceSignal] = []
}
