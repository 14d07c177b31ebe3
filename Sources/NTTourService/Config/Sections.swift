import NTHTTPCore

// The configuration in sections: `ToursdConfig` is decoded and checked once (every key, its
// range, the relations between keys); each part of the service is handed the section it reads,
// never the whole. Only the composition (and the command line) names `ToursdConfig`.

/// What the API's routes allow a request (docs/api.md): bodies, documents, and the tenant's
/// grants, tokens, share links, webhooks and logo.
struct APISettings: Sendable {
    var maxJsonBodyBytes: Int
    var maxJsonDepth: Int
    var maxPlanBodyBytes: Int
    var maxPlanCoordinateMetres: Int
    var maxWorldMapBytes: Int
    var maxPanoramaBytes: Int
    var maxLogoBytes: Int
    var logoWidth: Int
    var maxEventWaitSeconds: Int
    var eventPollMs: Int
    var grantLifetimes: ClosedRange<Int>
    var grantsPerTenant: Int
    var grantMaxProperties: Int
    var tokensPerTenant: Int
    var shares: ShareSettings
    var maxWebhooksPerTenant: Int
    var webhookAllowPrivateTargets: Bool

    init(_ config: ToursdConfig) {
        maxJsonBodyBytes = config.maxJsonBodyBytes
        maxJsonDepth = config.maxJsonDepth
        maxPlanBodyBytes = config.maxPlanBodyBytes
        maxPlanCoordinateMetres = config.maxPlanCoordinateMetres
        maxWorldMapBytes = config.maxWorldMapBytes
        maxPanoramaBytes = config.maxPanoramaBytes
        maxLogoBytes = config.maxLogoBytes
        logoWidth = config.logoWidth
        maxEventWaitSeconds = config.maxEventWaitSeconds
        eventPollMs = config.eventPollMs
        grantLifetimes = config.grantMinSeconds...config.grantMaxSeconds
        grantsPerTenant = config.grantsPerTenant
        grantMaxProperties = config.grantMaxProperties
        tokensPerTenant = config.tokensPerTenant
        shares = ShareSettings(config)
        maxWebhooksPerTenant = config.maxWebhooksPerTenant
        webhookAllowPrivateTargets = config.webhookAllowPrivateTargets
    }
}

/// Share links: their lifetimes, how many a tour has, who may frame them, their visits.
struct ShareSettings: Sendable {
    var lifetimes: ClosedRange<Int>
    /// A link's lifetime when none is asked (`shareDefaultSeconds`, within the range).
    var defaultLifetime: Int
    var maxPerTour: Int
    var maxFrameAncestors: Int
    var visitsPerDay: Int
    var visitMaxSeconds: Int
    var eventSeconds: Int

    init(_ config: ToursdConfig) {
        lifetimes = config.shareMinSeconds...config.shareMaxSeconds
        defaultLifetime = config.shareLifetime
        maxPerTour = config.maxSharesPerTour
        maxFrameAncestors = config.maxFrameAncestorsPerShare
        visitsPerDay = config.shareVisitsPerDay
        visitMaxSeconds = config.shareVisitMaxSeconds
        eventSeconds = config.shareEventMinutes * 60
    }

    /// The lifetimes the property page offers a share link, within the range, the default among them.
    var offered: [Int] {
        Set([3600, 86_400, 7 * 86_400, 30 * 86_400, 90 * 86_400, defaultLifetime]).filter { lifetimes.contains($0) }.sorted()
    }
}

/// Resumable uploads (docs/api.md "Panoramas — resumable upload").
struct UploadSettings: Sendable {
    var maxPanoramaBytes: Int64
    var expirySeconds: Int64
    var maxUnfinishedPerTenant: Int
    var maxUnfinishedBytesPerTenant: Int64
    var takeoverGraceMs: Int
    var takeoverSeconds: Int
    var durableStepBytes: Int
    var interimResponses: Bool

    init(_ config: ToursdConfig) {
        maxPanoramaBytes = Int64(config.maxPanoramaBytes)
        expirySeconds = Int64(config.uploadExpirySeconds)
        maxUnfinishedPerTenant = config.maxUnfinishedUploadsPerTenant
        maxUnfinishedBytesPerTenant = Int64(config.maxUnfinishedUploadBytesPerTenant)
        takeoverGraceMs = config.uploadTakeoverGraceMs
        takeoverSeconds = config.uploadTakeoverSeconds
        durableStepBytes = config.uploadDurableStepBytes
        interimResponses = config.resumableInterimResponses
    }
}

/// Previews, tiles and a panorama's processing (docs/security.md "The image budget").
struct ImageSettings: Sendable {
    var previewWidths: [Int]
    var quality: Int
    var maxSourcePixels: Int
    var maxPreviewDecodeBytes: Int
    var maxScans: Int
    var maxItems: Int
    var previewQueueLimit: Int
    var memoryBytes: Int
    var tileMinWidth: Int
    var tileMaxAspectRatio: Int
    var maxTileFaceSize: Int
    var tileMaxSpherePerPixel: Int
    var maxTileCpuSeconds: Int
    var maxTileDecodeBytes: Int
    var tileQueueLimit: Int
    var processingQueueLimit: Int
    var processingRetrySeconds: Int
    var retryAfterSeconds: Int

    init(_ config: ToursdConfig) {
        previewWidths = config.previewWidths
        quality = config.previewQuality
        maxSourcePixels = config.maxPreviewSourcePixels
        maxPreviewDecodeBytes = config.maxPreviewDecodeBytes
        maxScans = config.maxPreviewScans
        maxItems = config.maxPreviewItems
        previewQueueLimit = config.previewQueueLimit
        memoryBytes = config.imageMemoryBytes
        tileMinWidth = config.tileMinWidth
        tileMaxAspectRatio = config.tileMaxAspectRatio
        maxTileFaceSize = config.maxTileFaceSize
        tileMaxSpherePerPixel = config.tileMaxSpherePerPixel
        maxTileCpuSeconds = config.maxTileCpuSeconds
        maxTileDecodeBytes = config.maxTileDecodeBytes
        tileQueueLimit = config.tileQueueLimit
        processingQueueLimit = config.processingQueueLimit
        processingRetrySeconds = config.processingRetrySeconds
        retryAfterSeconds = config.retryAfterSeconds
    }

    /// The configured width closest to `width`.
    func width(near width: Int) -> Int {
        previewWidths.min { abs($0 - width) < abs($1 - width) } ?? width
    }
}

/// The tour viewer: the signed-in app and share links (docs/api.md "The tour viewer").
struct ViewerSettings: Sendable {
    var publicUrl: String
    var subtitle: String
    /// The platform's name on share links (nil: none, `publicPlatformName` empty).
    var sharePlatformName: String?
    var sessionLifetimeSeconds: Int
    var signInFailuresAllowed: Int
    var signInWindowSeconds: Int
    var pageSize: Int
    var maxFormBodyBytes: Int
    var maxJsonDepth: Int
    var trustedProxies: Set<[UInt8]>
    var shares: ShareSettings
    var previewWidths: [Int]
    /// Where the daemon listens: a link's URL when neither `publicUrl` nor the request's Host says.
    var listening: String

    init(_ config: ToursdConfig) {
        publicUrl = config.publicUrl
        subtitle = config.viewerSubtitle
        sharePlatformName = config.sharePlatformName
        sessionLifetimeSeconds = config.sessionLifetimeSeconds
        signInFailuresAllowed = config.signInFailuresAllowed
        signInWindowSeconds = config.signInWindowSeconds
        pageSize = config.viewerPageSize
        maxFormBodyBytes = config.maxFormBodyBytes
        maxJsonDepth = config.maxJsonDepth
        trustedProxies = config.trustedProxyAddresses
        shares = ShareSettings(config)
        previewWidths = config.previewWidths
        listening = "\(config.host):\(config.port)"
    }
}

/// Webhook deliveries (docs/webhooks.md).
struct WebhookSettings: Sendable {
    var concurrency: Int
    var pollMs: Int
    var timeoutMs: Int
    var backoffBaseMs: Int
    var backoffMaxMs: Int
    var retryHours: Int
    var responseBytes: Int
    var deliveryLog: Int
    var allowPrivateTargets: Bool
    var metricsRefreshSeconds: Int

    init(_ config: ToursdConfig) {
        concurrency = config.webhookConcurrency
        pollMs = config.webhookPollMs
        timeoutMs = config.webhookTimeoutMs
        backoffBaseMs = config.webhookBackoffBaseMs
        backoffMaxMs = config.webhookBackoffMaxMs
        retryHours = config.webhookRetryHours
        responseBytes = config.webhookResponseBytes
        deliveryLog = config.webhookDeliveryLog
        allowPrivateTargets = config.webhookAllowPrivateTargets
        metricsRefreshSeconds = config.metricsRefreshSeconds
    }
}

/// The background jobs' rounds (sweeps, the feed's settled changes) and what they keep.
struct SweepSettings: Sendable {
    var intervalSeconds: Int
    var eventRetentionDays: Int
    var grantKeepDays: Int
    var tourChangedQuietSeconds: Int
    var tourChangedCheckMs: Int
    var bucketSweepSeconds: Int
    var orphanGraceSeconds: Int
    var orphanSweepLimit: Int

    init(_ config: ToursdConfig) {
        intervalSeconds = config.uploadSweepIntervalSeconds
        eventRetentionDays = config.eventRetentionDays
        grantKeepDays = config.grantKeepDays
        tourChangedQuietSeconds = config.tourChangedQuietSeconds
        tourChangedCheckMs = config.tourChangedCheckMs
        bucketSweepSeconds = config.bucketSweepSeconds
        orphanGraceSeconds = config.orphanGraceSeconds
        orphanSweepLimit = config.orphanSweepLimit
    }
}

/// Where the deployment keeps its rows, blobs and key, and how its database is opened
/// (`Deployment`, `ServerStorage`, `WebhookKey`, the start-up).
public struct StorageSettings: Sendable {
    var dataDir: String
    var databaseUrl: String
    var migrationsDir: String
    var blobStore: String
    var blobDir: String
    /// The folder blobs are kept in (`blobDir`, else the data directory's own).
    var blobFolder: String
    var s3Endpoint: String
    var s3Region: String
    var s3PathStyle: Bool
    var webhookKeyFile: String
    var sqliteReaders: Int
    var sqliteOptimizeSeconds: Int
    var databaseFileCheckSeconds: Int
    var databasePoolSize: Int
    var databaseHandlerThreads: Int
    var databaseStatementTimeoutSeconds: Int
    var retryAfterSeconds: Int

    init(_ config: ToursdConfig) {
        (dataDir, databaseUrl, migrationsDir) = (config.dataDir, config.databaseUrl, config.migrationsDir)
        (blobStore, blobDir, blobFolder) = (config.blobStore, config.blobDir, config.blobFolder)
        (s3Endpoint, s3Region, s3PathStyle) = (config.s3Endpoint, config.s3Region, config.s3PathStyle)
        webhookKeyFile = config.webhookKeyFile
        (sqliteReaders, sqliteOptimizeSeconds, databaseFileCheckSeconds) = (config.sqliteReaders, config.sqliteOptimizeSeconds, config.databaseFileCheckSeconds)
        (databasePoolSize, databaseHandlerThreads) = (config.databasePoolSize, config.databaseHandlerThreads)
        (databaseStatementTimeoutSeconds, retryAfterSeconds) = (config.databaseStatementTimeoutSeconds, config.retryAfterSeconds)
    }
}

/// The service's own thread pools' sizes (`ServicePools`).
struct PoolSettings: Sendable {
    var ioThreads: Int
    var ioThreadNiceness: Int
    var previewThreads: Int
    var webhookConcurrency: Int
    var s3TransferThreads: Int

    init(_ config: ToursdConfig) {
        (ioThreads, ioThreadNiceness, previewThreads) = (config.ioThreads, config.ioThreadNiceness, config.previewThreads)
        (webhookConcurrency, s3TransferThreads) = (config.webhookConcurrency, config.s3TransferThreads)
    }
}

/// Where requests' spans are sent (`OTLPExporter`).
struct TraceSettings: Sendable {
    var endpoint: String
    var queueSpans: Int
    var timeoutMs: Int
    var serviceName: String
    var outageLogSeconds: Int

    init(_ config: ToursdConfig) {
        (endpoint, queueSpans, timeoutMs) = (config.otlpEndpoint, config.otlpQueueSpans, config.otlpTimeoutMs)
        (serviceName, outageLogSeconds) = (config.otlpServiceName, config.outageLogSeconds)
    }
}

extension ToursdConfig {
    /// The sections its parts are handed.
    public var storage: StorageSettings { StorageSettings(self) }
    var pools: PoolSettings { PoolSettings(self) }
    var traces: TraceSettings { TraceSettings(self) }
}
