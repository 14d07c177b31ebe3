import NTThreadPools
import NTTracing
import Dispatch
import Foundation
import NTHashing
import NTHTTPCore
import NTCoordination
import NTLogging
import NTObjectStorage
import NTPostgresDB
import NTSQLiteDB
import Synchronization

/// A reason toursd cannot start or a command cannot run, in words an operator can act on.
public struct StartupError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The sync service: its storage opened and brought up to date, and its routes.
public final class SyncService: Sendable {
    let deployment: Deployment
    let context: ServiceContext
    let blobs: OpenedBlobs
    let sessions: UploadSessions
    let ownership: UploadOwnership
    private let webhookKey: SecretBox
    /// Each upload's URL as its own credential, under a key derived from `webhookKey` (which
    /// every daemon of a deployment shares).
    private let capabilities: UploadCapabilities
    /// The `/v1` routes' access rules, as the last router made recorded them.
    private let rules = Mutex<[RouteRule]>([])
    private let webhooks: WebhookDeliverer
    /// What /metrics asks for (`metricsTokenFile`); nil: nothing.
    private let metricsToken: [UInt8]?
    /// What sends requests' spans, and holds them meanwhile (nil: no traces).
    private let exporter: OTLPExporter?
    private let timers = Mutex<[ServiceTimer]>([])
    /// Set at SIGTERM: `/readyz` says draining while requests are still served.
    private let draining = Atomic<Bool>(false)

    /// Opens the data directory: the database migrated to the newest schema, files left by a
    /// crash removed, and on a first start a tenant "default" with its token in
    /// `<dataDir>/admin.token`. With `crashAt`, the process dies at that step (tests only).
    /// `deployment`: what `config` describes, decided once by the caller.
    public static func open(_ deployment: Deployment, config: ToursdConfig, logger: Logger, crashAt: CrashPoint? = nil) throws(StartupError) -> SyncService {
        try open(deployment, config: config, logger: logger, crashAt: crashAt, beforeEachFileJob: nil)
    }

    /// `beforeEachFileJob` runs before every job of the file I/O pool: tests make the disk slow
    /// with it.
    /// `storage` wraps the database the service is given (tests watch the statements it runs);
    /// `clock` is the time of day it reads (tests move theirs on).
    static func open(_ deployment: Deployment, config: ToursdConfig, logger: Logger, crashAt: CrashPoint? = nil,
                     beforeEachFileJob: (@Sendable () -> Void)?, storage: (any SQLStorage) -> any SQLStorage = { $0 },
                     clock: any ServiceClock = SystemClock()) throws(StartupError) -> SyncService {
        let pools = ServicePools(config, beforeEachFileJob: beforeEachFileJob)
        try StartupError.makeDirectories(config.dataDir)
        let blobs = try openBlobs(deployment.blobs, config, io: pools.files)
        let pool = storage(try ServerStorage.open(deployment.records, config, logger: logger))
        let webhookKey = try WebhookKey.load(config)
        let metricsToken = try MetricsToken.load(config)
        let exporter = try OTLPExporter(config: config, logger: logger)
        // Several daemons on one database take turns through its locks; one daemon, through its own.
        let locker: any Locker = switch deployment.records {
        case .sqlite: LocalLocker()
        case .postgres(let url): PostgresLocker(url: url, waitConnections: config.databaseLockWaitConnections,
                                                statementTimeoutSeconds: config.databaseStatementTimeoutSeconds)
        }
        let sharedPreviews: BucketBlobStore? = if case .bucket(let bucket) = blobs { bucket } else { nil }
        // Traced, the store's calls are spans of the requests that make them.
        let deploymentId = try deploymentId(pool)
        try checkKey(webhookKey, pool, config)
        let context = ServiceContext(pool: pool, blobs: exporter == nil ? blobs.store : TracedBlobStore(blobs.store), imageThreads: pools.previews, deploymentId: deploymentId, locker: locker,
                                     sharedPreviews: sharedPreviews, config: config, logger: logger, clock: clock,
                                     crashPoints: CrashPoints(armed: crashAt))
        let service = SyncService(deployment, context: context, blobs: blobs, webhookKey: webhookKey, metricsToken: metricsToken,
                                  exporter: exporter, webhookThreads: pools.webhooks)
        try service.recover()
        try service.bootstrapToken()
        service.startTimers()
        return service
    }

    /// The folder or the bucket the deployment names, opened.
    private static func openBlobs(_ place: Deployment.Blobs, _ config: ToursdConfig, io: ThreadPool) throws(StartupError) -> OpenedBlobs {
        switch place {
        case .bucket(let bucket):
            let transfers = ServicePools.bucketTransfers(config)
            let timeouts = TransferTimeouts(connectMs: config.s3ConnectTimeoutMs, stallSeconds: config.s3StallSeconds)
            do {
                return .bucket(try BucketBlobStore(bucket: ObjectBucket(settings: bucket, transfers: transfers, timeouts: timeouts), dataDir: config.dataDir,
                                                   io: io, partSize: config.s3PartBytes, copyBytes: Int64(config.blobCopyBytes),
                                                   retryAfterSeconds: config.retryAfterSeconds,
                                                   presignedSeconds: config.s3PresignedReads ? config.s3PresignedSeconds : nil))
            } catch {
                throw StartupError("cannot prepare the bucket's local folders under \(config.dataDir): \(error.message)")
            }
        case .folder(let path, let shared):
            // A shared blob folder receives each daemon's bodies in a folder of that daemon's own.
            let temporary = shared ? path + "/.incoming/" + (try instanceId(config)) : config.dataDir + "/tmp"
            do {
                return .folder(try DirectoryBlobStore(blobs: path, temporaryDirectory: temporary, io: io))
            } catch {
                throw StartupError("cannot open the blob folder \(path): \(error.message)")
            }
        }
    }

    private init(_ deployment: Deployment, context: ServiceContext, blobs: OpenedBlobs, webhookKey: SecretBox, metricsToken: [UInt8]?,
                 exporter: OTLPExporter?, webhookThreads: ThreadPool) {
        self.deployment = deployment
        self.metricsToken = metricsToken
        self.exporter = exporter
        self.context = context
        self.blobs = blobs
        self.webhookKey = webhookKey
        capabilities = UploadCapabilities(key: webhookKey)
        webhooks = WebhookDeliverer(context: context, key: webhookKey, threads: webhookThreads, tracer: exporter?.tracer)
        let sessions = UploadSessions(blobs: context.blobs, locker: context.locker, durableStep: context.config.uploadDurableStepBytes) { [context] key, offset in
            do {
                guard try await context.write({ try await UploadStore.advanceOffset($0, key.tenant, key.id, to: offset) }) else {
                    let revoked = try await context.readOne { try await GrantStore.uploadRevoked($0, key.tenant, upload: key.id) } == true
                    return revoked ? ServiceError.uploadGrantRevoked : nil
                }
            } catch {
                context.logger.warn("could not record an upload's durable step", ["upload": key.id, "error": "\(error)"])
            }
            return nil
        }
        self.sessions = sessions
        ownership = UploadOwnership(locker: context.locker, waitSeconds: Double(context.config.uploadTakeoverSeconds), logger: context.logger) { key, letGo in
            // Under the lock that opening a session and finishing hold: a finish under way
            // completes first, and no session opens between the end and the letting go.
            try? await sessions.finishing(key) {
                await sessions.endAndWait(key)
                await letGo()
            }
        }
    }

    deinit { stop() }

    /// Expired uploads, grants and share links (with their visits, and the visitor salts of
    /// earlier days), and events past `eventRetentionDays`, go at start-up and then every
    /// `uploadSweepIntervalSeconds`; settled tour changes get their event every
    /// `tourChangedCheckMs`.
    private func startTimers() {
        let uploads = Uploads(context: context, sessions: sessions, ownership: ownership, capabilities: capabilities)
        let context = self.context
        let sweep = ServiceTimer(every: .seconds(context.config.uploadSweepIntervalSeconds), on: context.blobs.io) {
            await uploads.sweepExpired()
            await context.sweepOldEvents()
            await context.sweepExpiredGrants()
            await context.sweepShareVisits()
            await context.processUnfinished()
        }
        // Database work only: on the handler threads, not the file pool (whose jobs wait on the disk).
        let tourChanges = ServiceTimer(every: .milliseconds(context.config.tourChangedCheckMs), on: context.pool.handlerThreads) {
            await context.writeSettledTourChanges()
        }
        let webhooks = self.webhooks
        // Every webhookPollMs, the first one from now: the start has nothing of its own to send.
        let deliveries = ServiceTimer(every: .milliseconds(context.config.webhookPollMs), startingNow: false, on: context.pool.handlerThreads) {
            await webhooks.deliverDue()
        }
        let backlog = ServiceTimer(every: .seconds(context.config.metricsRefreshSeconds), on: context.pool.handlerThreads) {
            await webhooks.refreshBacklog()
        }
        // Each storage component's outage, logged as it starts, while it lasts and as it ends.
        let outages = ServiceTimer(every: .seconds(1), on: context.pool.handlerThreads) { context.outages.check() }
        var started = [sweep, tourChanges, deliveries, backlog, outages]
        if let exporter {
            started.append(ServiceTimer(every: .milliseconds(context.config.otlpExportMs), startingNow: false, on: context.blobs.io) { await exporter.export() })
        }
        if case .bucket(let bucket) = blobs {
            let orphans = BucketSweep(store: bucket, context: context, databaseName: deployment.records.name)
            started.append(ServiceTimer(every: .seconds(context.config.bucketSweepSeconds), on: context.blobs.io) { await orphans.round() })
        }
        timers.withLock { $0 = started }
    }

    /// Stops the timers and lets the file pool's threads go once their work is done (for
    /// tests and tools that open a service and drop it).
    public func stop() {
        timers.withLock { timers in
            for timer in timers { timer.cancel() }
            timers = []
        }
        webhooks.stop()
        exporter?.stop()
        context.locker.stop()
        context.blobs.stop()
        context.previews.stop()
        context.pool.stop()
    }

    /// The tracer's line of /metrics, when traces are sent.
    private var traceMetrics: String {
        guard let exporter else { return "" }
        return """
            # HELP toursd_trace_spans_dropped_total Spans dropped since start, otlpQueueSpans waiting already.
            # TYPE toursd_trace_spans_dropped_total counter
            toursd_trace_spans_dropped_total \(exporter.tracer.dropped)

            """
    }

    /// The daemon is stopping: `/readyz` answers 503 `draining` from now on, so that a balancer
    /// stops sending while requests are still served.
    public func beginDraining() { draining.store(true, ordering: .relaxed) }

    /// The threads toursd's request handlers run on: SQLite's reader threads, each with its
    /// own read connection (a handler's reads need no thread hop), or PostgreSQL's handler
    /// threads (a read waits on no thread).
    public var handlerThreads: ThreadPool { context.pool.handlerThreads }

    /// Who may call each `/v1` route (docs/security.md "Who may call what"), as `makeRouter`
    /// added them.
    var accessRules: [RouteRule] { rules.withLock { $0 } }

    /// The router of every route toursd serves, each behind the middleware it needs.
    public func makeRouter(metrics: ServerMetrics) -> Router {
        // /metrics labels requests by route, so it needs the router it belongs to.
        let routerBox = RouterReference()
        let context = self.context
        let authenticated = Authentication(context: context)
        let uploads = Uploads(context: context, sessions: sessions, ownership: ownership, capabilities: capabilities)
        let router = Router { table in
            OpsRoutes.add(to: &table, metrics: metrics, routes: { routerBox.routes }, unavailable: {
                context.pool.unavailableReason ?? context.blobs.unavailableReason
            }, draining: { [self] in draining.load(ordering: .relaxed) },
                          metricsToken: metricsToken, serviceMetrics: { context.previews.metrics + context.tiles.metrics + context.processing.metrics + context.commits.metrics + context.databaseMetrics
                              + context.blobs.metrics + self.webhooks.metrics + self.traceMetrics })
            // Every route but the health checks and /metrics, which a balancer or a scraper
            // polls: a span each would drown the traces.
            table.group(exporter.map { [RequestTracing(tracer: $0.tracer)] } ?? []) { table in
                table.group(ServiceErrors(context)) { table in
                    var api = GuardedRoutes(table, context: context)
                    api.group(authenticated) { table in
                        PropertyRoutes.add(to: &table, context)
                        FloorRoutes.add(to: &table, context)
                        PanoramaRoutes.add(to: &table, context, uploads: uploads)
                        PreviewRoutes.add(to: &table, context)
                        ShareRoutes.add(to: &table, context)
                        EventRoutes.add(to: &table, context)
                        WebhookRoutes.add(to: &table, context, key: webhookKey)
                        GrantRoutes.add(to: &table, context)
                        BrandingRoutes.add(to: &table, context)
                    }
                    UploadRoutes.add(to: &api, uploads, authenticated: authenticated)
                    table = api.table
                    rules.withLock { $0 = api.rules }
                }
                ViewerRoutes.add(to: &table, context)
            }
        }
        routerBox.set(router)
        return router
    }
}

/// A job run at start-up (or, not `startingNow`, after one interval) and then every `interval`, on `executor`; created, cancelled and
/// released under the service's lock. A tick that comes while the last run still goes (a slow
/// disk or database) is skipped, so runs never pile up.
private struct ServiceTimer: @unchecked Sendable {
    private let timer: DispatchSourceTimer

    init(every interval: DispatchTimeInterval, startingNow: Bool = true, on executor: any TaskExecutor, _ job: @escaping @Sendable () async -> Void) {
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: startingNow ? .now() : .now() + interval, repeating: interval, leeway: .milliseconds(100))
        let running = Running()
        timer.setEventHandler {
            guard running.flag.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
            Task(executorPreference: executor) {
                await job()
                running.flag.store(false, ordering: .releasing)
            }
        }
        timer.resume()
    }

    private final class Running: Sendable {
        let flag = Atomic<Bool>(false)
    }

    func cancel() { timer.cancel() }
}

/// Lets a route read the router it is part of, which exists only once all routes are added.
private final class RouterReference: Sendable {
    private let router = Mutex<Router?>(nil)
    func set(_ value: Router) { router.withLock { $0 = value } }
    var routes: [Route] { router.withLock { $0?.routes ?? [] } }
}
