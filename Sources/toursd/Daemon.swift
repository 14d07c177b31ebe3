#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import HTTPCore
import Logging
import TourService

/// Starts toursd: configuration, signals, the server. A plain (not main-actor) type, since
/// Dispatch handlers made in top-level code would be main-actor isolated and trap when they
/// run elsewhere.
enum Daemon {
    static func main(_ arguments: [String]) -> Never {
        // A peer that closes while we write gives EPIPE on send (MSG_NOSIGNAL), and any other
        // write path must not kill the process either.
        signal(SIGPIPE, SIG_IGN)
        let command: ToursdCommand
        do throws(ConfigError) {
            command = try ToursdCommand.parse(arguments)
        } catch {
            writeToStandardError("toursd: \(error.message)\n")
            exit(2)
        }
        switch command {
        case .help(let text):
            print(text)
            exit(0)
        case .serve(let config):
            serve(config)
        }
    }

    private static func serve(_ config: ToursdConfig) -> Never {
        let logger = Logger(level: config.level, format: config.format)
        do {
            try FileManager.default.createDirectory(atPath: config.dataDir, withIntermediateDirectories: true)
        } catch {
            logger.error("cannot create the data directory", ["dataDir": config.dataDir, "error": "\(error)"])
            exit(1)
        }
        let metrics = ServerMetrics()
        let server = HTTPServer(configuration: config.server, router: SyncService.makeRouter(config: config, metrics: metrics),
                                metrics: metrics, logger: logger)
        let address: SocketAddress
        do {
            address = try server.start()
        } catch {
            logger.error("cannot listen", ["host": config.host, "port": String(config.port), "error": "\(error)"])
            exit(1)
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
