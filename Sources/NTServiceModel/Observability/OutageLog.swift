import NTLogging
import NTSQLKit
import Synchronization

/// What the log says of one component (the database, the blob store) as it goes away and comes
/// back: a warning when it goes, another every `interval` while it stays away, one line when it
/// is back. Pure: the watch drives it with what the component says of itself and the time.
package struct OutageWatch: Equatable {
    enum State: Equatable {
        case reachable
        /// Away since `since`, last said at `said`.
        case away(since: ContinuousClock.Instant, said: ContinuousClock.Instant)
    }

    /// A line to log.
    package enum Line: Equatable {
        case gone(reason: String)
        case stillAway(reason: String, seconds: Int)
        case back(afterSeconds: Int)
    }

    let interval: Duration
    private(set) var state = State.reachable

    package init(interval: Duration) {
        self.interval = interval
    }

    /// `reason`: why the component cannot be reached now (nil: it can).
    package mutating func observe(_ reason: String?, at now: ContinuousClock.Instant) -> Line? {
        switch (state, reason) {
        case (.reachable, nil):
            return nil
        case (.reachable, let reason?):
            state = .away(since: now, said: now)
            return .gone(reason: reason)
        case (.away(let since, _), nil):
            state = .reachable
            return .back(afterSeconds: Int((now - since).components.seconds))
        case (.away(let since, let said), let reason?):
            guard now - said >= interval else { return nil }
            state = .away(since: since, said: now)
            return .stillAway(reason: reason, seconds: Int((now - since).components.seconds))
        }
    }
}

/// Storage outages as the log tells them (`OutageWatch`, every `outageLogSeconds`), whoever met
/// them: requests and background jobs note what they met (`met`, with the backend's own words
/// for the log), and the daemon's watch, checking each component's own state every second
/// (`check`), logs each outage once as it starts, again every `outageLogSeconds` while it lasts,
/// and once when it ends.
package final class OutageLog: Sendable {
    /// A component watched: its name in the log, and why it cannot be reached now (nil: it can).
    package struct Component: Sendable {
        let name: String
        let reason: @Sendable () -> String?

        package init(name: String, reason: @escaping @Sendable () -> String?) {
            self.name = name
            self.reason = reason
        }
    }

    private let components: [Component]
    private let watches: Mutex<[OutageWatch]>
    /// The backend's own words of the last failure met (a host and port): the log's, never an answer's.
    private let detail = Mutex<String?>(nil)
    private let logger: Logger

    package init(intervalSeconds: Int, logger: Logger, components: [Component]) {
        self.components = components
        watches = Mutex(components.map { _ in OutageWatch(interval: .seconds(intervalSeconds)) })
        self.logger = logger
    }

    /// A request or a job met storage that cannot be reached: its words kept for the log.
    package func met(_ error: StorageError) {
        detail.withLock { $0 = error.description }
    }

    /// A background job's failure (`message`): logged, unless it is storage that cannot be
    /// reached, which the outage's own lines tell, not each round.
    package func failed(_ message: String, _ error: any Error) {
        if let failure = error as? any StorageFailure, failure.storageError.kind == .unavailable {
            met(failure.storageError)
            return
        }
        logger.warn(message, ["error": "\(error)"])
    }

    /// Looks at each component now, and logs what changed.
    package func check(at now: ContinuousClock.Instant = .now) {
        let reasons = components.map { $0.reason() }
        let lines = watches.withLock { watches in reasons.indices.map { watches[$0].observe(reasons[$0], at: now) } }
        let words = detail.withLock { $0 }
        for (component, line) in zip(components, lines) {
            switch line {
            case nil: break
            case .gone(let reason)?:
                logger.warn("\(component.name) cannot be reached; requests get 503 until it is back", ["reason": reason, "detail": words ?? "-"])
            case .stillAway(let reason, let seconds)?:
                logger.warn("\(component.name) still cannot be reached", ["reason": reason, "detail": words ?? "-", "seconds": String(seconds)])
            case .back(let seconds)?:
                logger.info("\(component.name) is reached again", ["afterSeconds": String(seconds)])
            }
        }
    }
}
