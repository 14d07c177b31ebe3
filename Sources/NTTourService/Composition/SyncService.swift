import Dispatch
import Foundation
import NTCoordination
import NTHashing
import NTHTTPCore
import NTLogging
import NTObjectStorage
import NTPostgresDB
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTSQLiteDB
import NTThreadPools
import NTTourUseCases
import NTTracing
import NTUploads
import NTViewerService
import NTWebhooks
import Synchronization

/// The sync service: its storage opened and brought up to date, its parts built from the one
/// `Deployment` value and each handed what it uses (its ports and its section of the
/// settings), its background jobs, and its routes. The composition root: the only part that
/// names the whole configuration.
public final class SyncService: Sendable {
    let deployment: Deployment
    let config: ToursdConfig
    let logger: Logger
    let records: Records
    let blobs: OpenedBlobs
    /// The blob store the parts are given (traced when traces are sent).
    let store: any BlobStore
    let clock: any ServiceClock
    let crashPoints: CrashPoints
    /// Who may act on a thing now, in this daemon and across the deployment's daemons.
    let locker: any Locker
    /// The database's deployment id (`DeploymentStore`): the blob store it may sweep holds it.
    let deploymentId: String
    let outages: OutageLog
    let images: PanoramaImages
    let panoramas: Panoramas
    let floors: Floors
    let properties: Properties
    let uploads: Uploads
    let tokens: TenantTokens
    let signIns: SignInLimiter
    let sweeps: Sweeps
    private let webhookKey: SecretBox
    /// The `/v1` routes' access rules, as the last router made recorded them.
    private let rules = Mutex<[RouteRule]>([])
    private let webhooks: WebhookDeliverer
    /// What /metrics asks for (`metricsTokenFile`); nil: nothing.
    private let metricsToken: [UInt8]?
    /// What sends requests' spans, and holds them meanwhile (nil: no traces).
    private let exporter: OTLPExporter?
    private let jobs = BackgroundJobs()
    /// Set at SIGTERM: `/readyz` says draining while requests are still served.
    private let draining = Atomic<Bool>(false)

    /// Opens the data directory: the database migrated to the newest schema, files left by a
    /// crash removed, and on a first start a tenant "default" with its token in
    /// `<dataDir>/admin.token`. With `crashAt`, the process dies at that step (tests only).
    /// `deployment`: what `config` describes, decided once by the caller.
    public static func open(_ deployment: Deployment, config: ToursdConfig, logger: Logger, crashAt: CrashPoint? = nil) async throws(StartupError) -> SyncService {
        try await open(deployment, config: config, logger: logger, crashAt: crashAt, beforeEachFileJob: nil)
    }

    /// `beforeEachFileJob` runs before every job of the file I/O pool: tests make the disk slow
    /// with it.
    /// `storage` wraps the database the service is given (tests watch the statements it runs);
    /// `clock` is the time of day it reads (tests move theirs on).
    static func open(_ deployment: Deployment, config: ToursdConfig, logger: Logger, crashAt: CrashPoint? = nil,
                     beforeEachFileJob: (@Sendable () -> Void)?, storage: (any SQLStorage) -> any SQLStorage = { $0 },
                     clock: any ServiceClock = SystemClock()) async throws(StartupError) -> SyncService {
        try await ThreadPool.onThreadOfItsOwn(named: "start-up") { () async throws(StartupError) -> SyncService in
            let pools = ServicePools(config.pools, beforeEachFileJob: beforeEachFileJob)
            try StartupError.makeDirectories(config.dataDir)
            let blobs = try openBlobs(deployment.blobs, config, io: pools.files)
            let pool = storage(try await ServerStorage.open(deployment.records, config.storage, logger: logger))
            let webhookKey = try WebhookKey.load(config.storage, spansDaemons: deployment.spansDaemons)
            let metricsToken = try MetricsToken.load(config.metricsTokenFile)
            let exporter = try OTLPExporter(config.traces, logger: logger)
            // Several daemons on one database take turns through its locks; one daemon, through its own.
            let locker: any Locker = switch deployment.records {
            case .sqlite: LocalLocker()
            case .postgres(let url): PostgresLocker(url: url, waitConnections: config.databaseLockWaitConnections,
                                                    statementTimeoutSeconds: config.databaseStatementTimeoutSeconds)
            }
            let deploymentId = try await deploymentId(pool)
            try await checkKey(webhookKey, pool, config.storage)
            let service = SyncService(deployment, config: config, logger: logger, pool: pool, blobs: blobs, pools: pools, locker: locker, deploymentId: deploymentId,
                                      clock: clock, crashPoints: CrashPoints(armed: crashAt), webhookKey: webhookKey, metricsToken: metricsToken, exporter: exporter)
            try await service.recover()
            try await service.bootstrapToken()
            service.startJobs()
            return service
        }
    }

    /// The folder or the bucket the deployment names, opened.
    private static func openBlobs(_ place: Deployment.Blobs, _ config: ToursdConfig, io: ThreadPool) throws(StartupError) -> OpenedBlobs {
        switch place {
        case .bucket(let bucket):
            let transfers = ServicePools.bucketTransfers(config.pools)
            let timeouts = TransferTimeouts(connectMs: config.s3ConnectTimeoutMs, stallSeconds: config.s3StallSeconds)
            do {
                return .bucket(try BucketBlobStore(bucket: ObjectBucket(settings: bucket, transfers: transfers, timeouts: timeouts), dataDir: config.dataDir,
                                                   io: io, partSize: config.s3PartBytes, copyBytes: Int64(config.blobCopyBytes),
                                                   retryAfterSeconds: config.retryAfterSeconds, backgroundAttempts: config.s3BackgroundAttempts,
                                                   presignedSeconds: config.s3PresignedReads ? config.s3PresignedSeconds : nil))
            } catch {
                throw StartupError("cannot prepare the bucket's local folders under \(config.dataDir): \(error.message)")
            }
        case .folder(let path, let shared):
            // A shared blob folder receives each daemon's bodies in a folder of that daemon's own.
            let temporary = shared ? path + "/.incoming/" + (try instanceId(config.dataDir)) : config.dataDir + "/tmp"
            do {
                return .folder(try DirectoryBlobStore(blobs: path, temporaryDirectory: temporary, io: io))
            } catch {
                throw StartupError("cannot open the blob folder \(path): \(error.message)")
            }
        }
    }

    private init(_ deployment: Deployment, config: ToursdConfig, logger: Logger, pool: any SQLStorage, blobs: OpenedBlobs, pools: ServicePools, locker: any Locker,
                 deploymentId: String, clock: any ServiceClock, crashPoints: CrashPoints, webhookKey: SecretBox, metricsToken: [UInt8]?, exporter: OTLPExporter?) {
        (self.deployment, self.config, self.logger, self.blobs, self.locker) = (deployment, config, logger, blobs, locker)
        (self.deploymentId, self.clock, self.crashPoints, self.webhookKey, self.metricsToken, self.exporter) = (deploymentId, clock, crashPoints, webhookKey, metricsToken, exporter)
        let records = Records(pool: pool)
        self.records = records
        // Traced, the store's calls are spans of the requests that make them.
        let store: any BlobStore = exporter == nil ? blobs.store : TracedBlobStore(blobs.store)
        self.store = store
        let outages = OutageLog(intervalSeconds: config.outageLogSeconds, logger: logger, components: [
            OutageLog.Component(name: "the database") { pool.unavailableReason },
            OutageLog.Component(name: "the blob store") { store.unavailableReason },
        ])
        self.outages = outages
        let imageSettings = ImageSettings(config)
        let sharedPreviews: BucketBlobStore? = if case .bucket(let bucket) = blobs { bucket } else { nil }
        let previews = PreviewCache(dataDir: config.dataDir, io: store.io, decoders: pools.previews, settings: imageSettings, logger: logger, shared: sharedPreviews)
        let tiles = PanoramaTiles(dataDir: config.dataDir, io: store.io, images: previews.decoders, memory: previews.memory, settings: imageSettings, logger: logger)
        images = PanoramaImages(records: records, blobs: store, previews: previews, tiles: tiles, queue: ProcessingQueue(limit: imageSettings.processingQueueLimit),
                                clock: clock, logger: logger, outages: outages, settings: imageSettings)
        let uploadSettings = UploadSettings(config)
        panoramas = Panoramas(records: records, blobs: store, clock: clock, crashPoints: crashPoints,
                              turns: PanoramaTurns(locker: locker, waitSeconds: uploadSettings.takeoverSeconds), images: images)
        floors = Floors(records: records, blobs: store, clock: clock, crashPoints: crashPoints)
        properties = Properties(records: records, blobs: store, clock: clock, panoramas: panoramas)
        let sessions = UploadSessions(blobs: store, locker: locker, durableStep: uploadSettings.durableStepBytes) { key, offset in
            do {
                guard try await records.write({ try await UploadStore.advanceOffset($0, key.tenant, key.id, to: offset) }) else {
                    let revoked = try await records.readOne { try await GrantStore.uploadRevoked($0, key.tenant, upload: key.id) } == true
                    return revoked ? ServiceError.uploadGrantRevoked : nil
                }
            } catch {
                logger.warn("could not record an upload's durable step", ["upload": key.id, "error": "\(error)"])
            }
            return nil
        }
        let ownership = UploadOwnership(locker: locker, waitSeconds: Double(uploadSettings.takeoverSeconds), logger: logger) { key, letGo in
            // Under the lock that opening a session and finishing hold: a finish under way
            // completes first, and no session opens between the end and the letting go.
            try? await sessions.finishing(key) {
                await sessions.endAndWait(key)
                await letGo()
            }
        }
        uploads = Uploads(records: records, blobs: store, clock: clock, crashPoints: crashPoints, logger: logger, outages: outages, settings: uploadSettings,
                          panoramas: panoramas, sessions: sessions, ownership: ownership, capabilities: UploadCapabilities(key: webhookKey))
        tokens = TenantTokens(records: records, known: KnownTokens(capacity: config.tokenCacheEntries, threads: pool.handlerThreads), clock: clock)
        signIns = SignInLimiter(records: records, allowed: config.signInFailuresAllowed, window: config.signInWindowSeconds, clock: clock)
        sweeps = Sweeps(records: records, clock: clock, logger: logger, outages: outages, settings: SweepSettings(config), uploads: uploads, images: images)
        webhooks = WebhookDeliverer(records: records, clock: clock, logger: logger, outages: outages, settings: WebhookSettings(config), key: webhookKey,
                                    threads: pools.webhooks, tracer: exporter?.tracer)
    }

    deinit { stop() }

    /// The daemon's background jobs, in one place: expired uploads, grants and share links and
    /// old events swept (and stopped processings taken up) at start-up and every
    /// `uploadSweepIntervalSeconds`; settled tour changes given their event every
    /// `tourChangedCheckMs`; webhooks delivered; the outbox's backlog read for /metrics; the
    /// storage's outages logged; traces sent; the bucket's orphans swept.
    private func startJobs() {
        let (sweeps, webhooks, outages, settings) = (sweeps, webhooks, outages, SweepSettings(config))
        let changes = TourChanges(records: records, clock: clock, outages: outages, quietSeconds: settings.tourChangedQuietSeconds)
        let database = records.threads
        // Database work only: on the handler threads, not the file pool (whose jobs wait on the disk).
        var all = [
            BackgroundJob(interval: .seconds(settings.intervalSeconds), executor: store.io) { await sweeps.round() },
            BackgroundJob(interval: .milliseconds(settings.tourChangedCheckMs), executor: database) { await changes.round() },
            // Every webhookPollMs, the first one from now: the start has nothing of its own to send.
            BackgroundJob(interval: .milliseconds(config.webhookPollMs), startingNow: false, executor: database) { await webhooks.deliverDue() },
            BackgroundJob(interval: .seconds(config.metricsRefreshSeconds), executor: database) { await webhooks.refreshBacklog() },
            BackgroundJob(interval: .seconds(1), executor: database) { outages.check() },
        ]
        if let exporter {
            all.append(BackgroundJob(interval: .milliseconds(config.otlpExportMs), startingNow: false, executor: store.io) { await exporter.export() })
        }
        if let orphans = bucketSweep() {
            all.append(BackgroundJob(interval: .seconds(settings.bucketSweepSeconds), executor: store.io) { await orphans.round() })
        }
        jobs.start(all)
    }

    /// The bucket's sweep of this deployment (nil with a blob folder, swept at start-up).
    func bucketSweep() -> BucketSweep? {
        guard case .bucket(let bucket) = blobs else { return nil }
        return BucketSweep(store: bucket, records: records, clock: clock, outages: outages, logger: logger, settings: SweepSettings(config),
                           deploymentId: deploymentId, databaseName: deployment.records.name)
    }

    /// Stops the jobs and lets the pools' threads go once their work is done (for tests and
    /// tools that open a service and drop it).
    public func stop() {
        jobs.stop()
        webhooks.stop()
        exporter?.stop()
        locker.stop()
        store.stop()
        images.previews.stop()
        records.pool.stop()
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
    public var handlerThreads: ThreadPool { records.threads }

    /// Who may call each `/v1` route (docs/security.md "Who may call what"), as `makeRouter`
    /// added them.
    var accessRules: [RouteRule] { rules.withLock { $0 } }

    /// The router of every route toursd serves, each behind the middleware it needs, each
    /// group typed by the principal its authentication yields.
    public func makeRouter(metrics: ServerMetrics) -> Router {
        // /metrics labels requests by route, so it needs the router it belongs to.
        let routerBox = RouterReference()
        let (records, store, images, outages) = (records, store, images, outages)
        let api = APISettings(config)
        let contents = ContentAnswers(blobs: store)
        let imageAnswers = ImageAnswers(images: images, widths: config.previewWidths)
        let errors = ServiceErrors(logger: logger, retryAfterSeconds: config.retryAfterSeconds, outages: outages)
        let authentication = APIAuthentication(tokens: tokens)
        let creations = PanoramaCreations(panoramas: panoramas, tus: TusUploads(uploads: uploads), draft: DraftUploads(uploads: uploads))
        let shares = Shares(records: records, clock: clock, settings: api.shares, secrets: ShareSecrets(key: webhookKey))
        let branding = Branding(records: records, clock: clock, images: images, logoWidth: api.logoWidth)
        let imageSettings = ImageSettings(config)
        let floorPlans = FloorPlans(records: records, previews: images.previews, cache: FloorPlanCache(limit: imageSettings.floorPlanCacheBytes), settings: imageSettings)
        let viewerSettings = ViewerSettings(config)
        let viewer = ViewerService(reads: ViewerReads(records: records, clock: clock, shareSecrets: shares.secrets), panoramas: panoramas, shares: shares, branding: branding,
                                   sessions: ViewerSessions(records: records, clock: clock, lifetime: viewerSettings.sessionLifetimeSeconds), signIns: signIns,
                                   images: images, imageAnswers: imageAnswers, contents: contents, floorPlans: floorPlans, logger: logger, settings: viewerSettings)
        let router = Router { table in
            OpsRoutes.add(to: &table, metrics: metrics, routes: { routerBox.routes }, unavailable: {
                records.unavailableReason ?? store.unavailableReason
            }, draining: { [self] in draining.load(ordering: .relaxed) },
                          metricsToken: metricsToken, serviceMetrics: { [self] in
                              images.metrics + records.metrics + store.metrics + webhooks.metrics + traceMetrics
                          })
            // Every route but the health checks and /metrics, which a balancer or a scraper
            // polls: a span each would drown the traces.
            table.group(exporter.map { [RequestTracing(tracer: $0.tracer)] } ?? []) { table in
                table.group(errors) { table in
                    var v1 = APIRoutes(RouteGroup(table, authenticate: authentication.authenticate), authorization: GrantAuthorization(records: records),
                                       readsOnEventLoops: records.readsOnEventLoops)
                    PropertyRoutes.add(to: &v1, settings: api, properties: properties)
                    FloorRoutes.add(to: &v1, settings: api, floors: floors, contents: contents)
                    PanoramaRoutes.add(to: &v1, settings: api, creations: creations, contents: contents)
                    PreviewRoutes.add(to: &v1, panoramas: panoramas, answers: imageAnswers)
                    ShareRoutes.add(to: &v1, settings: api, shares: shares)
                    EventRoutes.add(to: &v1, settings: api, feed: EventFeed(records: records, pollMs: api.eventPollMs))
                    WebhookRoutes.add(to: &v1, settings: api, endpoints: WebhookEndpoints(records: records, clock: clock, key: webhookKey,
                                                                                          maxPerTenant: api.maxWebhooksPerTenant,
                                                                                          allowPrivateTargets: api.webhookAllowPrivateTargets))
                    GrantRoutes.add(to: &v1, settings: api, credentials: Credentials(records: records, clock: clock, grantsPerTenant: api.grantsPerTenant,
                                                                                     tokensPerTenant: api.tokensPerTenant))
                    BrandingRoutes.add(to: &v1, settings: api, branding: branding)
                    FloorPlanRoutes.add(to: &v1, plans: floorPlans)
                    UploadRoutes.add(to: &v1, creations)
                    var capability = RouteGroup(v1.table, authenticate: UploadCapabilityAuthentication(capabilities: uploads.capabilities, records: records).authenticate)
                    let capabilityRules = UploadRoutes.add(to: &capability, creations)
                    table = capability.table
                    rules.withLock { $0 = v1.rules + capabilityRules }
                }
                ViewerRoutes.add(to: &table, viewer, errors: errors)
            }
        }
        routerBox.set(router)
        return router
    }
}

/// Lets a route read the router it is part of, which exists only once all routes are added.
private final class RouterReference: Sendable {
    private let router = Mutex<Router?>(nil)
    func set(_ value: Router) { router.withLock { $0 = value } }
    var routes: [Route] { router.withLock { $0?.routes ?? [] } }
}
