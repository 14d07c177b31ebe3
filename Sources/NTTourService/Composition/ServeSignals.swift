#if canImport(Glibc)
import Glibc
#endif

/// What toursd serve does with a stop (SIGTERM, SIGINT) or reload (SIGHUP) signal, by where
/// its server is. The main thread takes the signals from the first line of `main` while the
/// service starts on another; a signal that comes before the server listens is kept and acted
/// on once it does, none lost. Pure: the daemon holds it under a lock and performs what it says.
public struct ServeSignals: Equatable, Sendable {
    public enum Phase: Equatable, Sendable {
        /// Opening the service; what was asked meanwhile, to do once it listens.
        case starting(stop: String?, reload: Bool)
        case serving
        /// Draining, then shutting down.
        case stopping
    }

    public enum Action: Equatable, Sendable {
        /// Drain (`/readyz` says so), then shut down; the signal's name.
        case stop(String)
        /// A stop signal while stopping already: nothing but a log line.
        case alreadyStopping(String)
        /// Read the configuration again and apply what can change live.
        case reload
    }

    public private(set) var phase = Phase.starting(stop: nil, reload: false)

    public init() {}

    /// `signal` has come: what to do now (nothing while starting: it is kept).
    public mutating func received(_ signal: Int32) -> Action? {
        let name = signal == SIGHUP ? nil : signal == SIGTERM ? "SIGTERM" : "SIGINT"
        switch (phase, name) {
        case (.starting(let stop, _), nil):
            phase = .starting(stop: stop, reload: true)
            return nil
        case (.starting(let stop, let reload), let name?):
            phase = .starting(stop: stop ?? name, reload: reload)
            return nil
        case (.serving, nil), (.stopping, nil):
            return .reload
        case (.serving, let name?):
            phase = .stopping
            return .stop(name)
        case (.stopping, let name?):
            return .alreadyStopping(name)
        }
    }

    /// The server listens: what was asked while it started, in the order to do it (a reload
    /// first, so that a stop drains for the reloaded `drainMs`).
    public mutating func started() -> [Action] {
        guard case .starting(let stop, let reload) = phase else { return [] }
        phase = stop == nil ? .serving : .stopping
        return (reload ? [.reload] : []) + (stop.map { [.stop($0)] } ?? [])
    }
}
