import Dispatch
import NTLogging
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTSQLKit
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks
import Synchronization

/// A job the daemon runs in the background: at start (or, not `startingNow`, after one
/// interval) and then every `interval`, on `executor`. A tick that comes while the last run
/// still goes (a slow database) is skipped, never stacked.
struct BackgroundJob: Sendable {
    let interval: DispatchTimeInterval
    var startingNow = true
    let executor: any TaskExecutor
    let run: @Sendable () async -> Void
}

/// The daemon's background jobs, started together and stopped together in one place: nothing
/// else starts a timer (swift-service-lifecycle's `ServiceGroup` is the model).
final class BackgroundJobs: Sendable {
    private let timers = Mutex<[Timer]>([])

    /// Starts `jobs`.
    func start(_ jobs: [BackgroundJob]) {
        let started = jobs.map { job in
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: job.startingNow ? .now() : .now() + job.interval, repeating: job.interval, leeway: .milliseconds(100))
            let running = Running()
            timer.setEventHandler {
                guard running.flag.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
                Task(executorPreference: job.executor) {
                    await job.run()
                    running.flag.store(false, ordering: .releasing)
                }
            }
            timer.resume()
            return Timer(source: timer)
        }
        timers.withLock { $0 += started }
    }

    /// Stops every job (a run under way goes on to its end).
    func stop() {
        timers.withLock { timers in
            for timer in timers.reversed() { timer.source.cancel() }
            timers = []
        }
    }

    /// A timer, created, cancelled and released under the lock.
    private struct Timer: @unchecked Sendable {
        let source: DispatchSourceTimer
    }

    private final class Running: Sendable {
        let flag = Atomic<Bool>(false)
    }
}

/// The rounds that remove what has had its time (every `uploadSweepIntervalSeconds`): expired
/// uploads, events past `eventRetentionDays`, grants expired `grantKeepDays` ago (those no
/// upload names), expired share links with their visits (and the visitor salts of earlier
/// days); and panoramas whose processing stopped, processed again.
struct Sweeps: Sendable {
    let records: Records
    let clock: any ServiceClock
    let logger: Logger
    let outages: OutageLog
    let settings: SweepSettings
    let uploads: Uploads
    let images: PanoramaImages

    func round() async {
        await uploads.sweepExpired()
        await removeOldEvents()
        await removeExpiredGrants()
        await removeExpiredShares()
        await images.processUnfinished()
    }

    func removeOldEvents() async {
        await removing("old events", "the event retention sweep failed") { [clock, settings] db in
            try await EventStore.deleteCreated(db, before: clock.timestamp(plus: -settings.eventRetentionDays * 86_400))
        }
    }

    func removeExpiredGrants() async {
        await removing("expired grants", "the expired grants' sweep failed") { [clock, settings] db in
            try await GrantStore.deleteExpired(db, before: clock.unixSeconds - Int64(settings.grantKeepDays) * 86_400)
        }
    }

    func removeExpiredShares() async {
        await removing("expired share links", "the share link sweep failed") { [clock] db in try await ShareVisitStore.sweep(db, at: clock.now()) }
    }

    /// One removal: how many went, logged when any did.
    private func removing(_ what: String, _ failure: String, _ body: @escaping SQLBody<Int>) async {
        do {
            let removed = try await records.write(body)
            if removed > 0 { logger.info("\(what) removed", ["count": String(removed)]) }
        } catch {
            outages.failed(failure, error)
        }
    }
}

/// `tour.changed` written for each property whose changes have settled
/// (`tourChangedQuietSeconds` without another), once across daemons, every `tourChangedCheckMs`.
struct TourChanges: Sendable {
    let records: Records
    let clock: any ServiceClock
    let outages: OutageLog
    let quietSeconds: Int

    func round() async {
        let cutoff = clock.unixSeconds - Int64(quietSeconds)
        do {
            let settled = try await records.readOne { try await EventStore.settledTourChanges($0, changedBy: cutoff, limit: 100) }
            for change in settled {
                let now = clock.now()
                _ = try await records.write { try await EventStore.writeTourChanged($0, change.tenant, property: change.property, changedBy: cutoff, at: now) }
            }
        } catch {
            outages.failed("writing settled tour changes failed", error)
        }
    }
}
