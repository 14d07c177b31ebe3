import NTHTTPCore

// The configuration in sections: `ToursdConfig` is decoded and checked once (every key, its
// range, the relations between keys); each part of the service is handed the section it reads,
// never the whole. Only the composition (and the command line) names `ToursdConfig`.

/// What the API's routes allow a request (docs/api.md): bodies, documents, and the tenant's
/// grants, tokens, share links, webhooks and logo.
package struct APISettings: Sendable {
    package var maxJsonBodyBytes: Int
    package var maxJsonDepth: Int
    package var maxPlanBodyBytes: Int
    package var maxPlanCoordinateMetres: Int
    package var maxWorldMapBytes: Int
    package var maxPanoramaBytes: Int
    package var maxLogoBytes: Int
    package var logoWidth: Int
    package var maxEventWaitSeconds: Int
    package var eventPollMs: Int
    package var grantLifetimes: ClosedRange<Int>
    package var grantsPerTenant: Int
    package var grantMaxProperties: Int
    package var tokensPerTenant: Int
    package var shares: ShareSettings
    package var maxWebhooksPerTenant: Int
    package var webhookAllowPrivateTargets: Bool

    package init(_ config: ToursdConfig) {
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
package struct ShareSettings: Sendable {
    package var lifetimes: ClosedRange<Int>
    /// A link's lifetime when none is asked (`shareDefaultSeconds`, within the range).
    package var defaultLifetime: Int
    package var maxPerTour: Int
    package var maxFrameAncestors: Int
    package var visitsPerDay: Int
    package var visitMaxSeconds: Int
    package var eventSeconds: Int

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
    package var offered: [Int] {
        Set([3600, 86_400, 7 * 86_400, 30 * 86_400, 90 * 86_400, defaultLifetime]).filter { lifetimes.contains($0) }.sorted()
    }
}

/// Resumable uploads (docs/api.md "Panoramas — resumable upload").
package struct UploadSettings: Sendable {
    package var maxPanoramaBytes: Int64
    package var expirySeconds: Int64
    package var maxUnfinishedPerTenant: Int
    package var maxUnfinishedBytesPerTenant: Int64
    package var takeoverGraceMs: Int
    package var takeoverSeconds: Int
    package var durableStepBytes: Int
    package var interimResponses: Bool

    package init(_ config: ToursdConfig) {
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
package struct ImageSettings: Sendable {
    package var previewWidths: [Int]
    package var quality: Int
    package var maxSourcePixels: Int
    package var maxPreviewDecodeBytes: Int
    package var maxScans: Int
    package var maxItems: Int
    package var previewQueueLimit: Int
    package var memoryBytes: Int
    package var tileMinWidth: Int
    package var tileMaxAspectRatio: Int
    package var maxTileFaceSize: Int
    package var tileMaxSpherePerPixel: Int
    package var maxTileCpuSeconds: Int
    package var maxTileDecodeBytes: Int
    package var tileQueueLimit: Int
    package var processingQueueLimit: Int
    package var processingRetrySeconds: Int
    package var retryAfterSeconds: Int
    /// Published floor plans: a PNG's width when none is asked, the widest asked, and the
    /// bytes of drawn plans kept.
    package var floorPlanPngWidth: Int
    package var maxFloorPlanPngWidth: Int
    package var floorPlanCacheBytes: Int

    package init(_ config: ToursdConfig) {
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
        floorPlanPngWidth = min(config.floorPlanPngWidth, config.maxFloorPlanPngWidth)
        maxFloorPlanPngWidth = config.maxFloorPlanPngWidth
        floorPlanCacheBytes = config.floorPlanCacheBytes
    }

    /// The configured width closest to `width`.
    func width(near width: Int) -> Int {
        previewWidths.min { abs($0 - width) < abs($1 - width) } ?? width
    }
}

/// The tour viewer: the signed-in app and share links (docs/api.md "The tour viewer").
package struct ViewerSettings: Sendable {
    package var publicUrl: String
    package var subtitle: String
    /// The platform's name on share links (nil: none, `publicPlatformName` empty).
    package var sharePlatformName: String?
    package var sessionLifetimeSeconds: Int
    package var signInFailuresAllowed: Int
    package var signInWindowSeconds: Int
    package var pageSize: Int
    package var maxFormBodyBytes: Int
    package var maxJsonDepth: Int
    package var trustedProxies: Set<[UInt8]>
    package var shares: ShareSettings
    package var previewWidths: [Int]
    /// Where the daemon listens: a link's URL when neither `publicUrl` nor the request's Host says.
    package var listening: String
    /// `panoramaHeightMetres`.
    package var panoramaHeight: Double

    package init(_ config: ToursdConfig) {
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
        panoramaHeight = config.panoramaHeightMetres
    }
}

/// Webhook deliveries (docs/webhooks.md).
package struct WebhookSettings: Sendable {
    package var concurrency: Int
    package var pollMs: Int
    package var timeoutMs: Int
    package var backoffBaseMs: Int
    package var backoffMaxMs: Int
    package var retryHours: Int
    package var responseBytes: Int
    package var deliveryLog: Int
    package var allowPrivateTargets: Bool
    package var metricsRefreshSeconds: Int

    package init(_ config: ToursdConfig) {
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
package struct SweepSettings: Sendable {
    package var intervalSeconds: Int
    package var eventRetentionDays: Int
    package var grantKeepDays: Int
    package var tourChangedQuietSeconds: Int
    package var tourChangedCheckMs: Int
    package var bucketSweepSeconds: Int
    package var orphanGraceSeconds: Int
    package var orphanSweepLimit: Int

    package init(_ config: ToursdConfig) {
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
    package var dataDir: String
    package var databaseUrl: String
    package var migrationsDir: String
    package var blobStore: String
    package var blobDir: String
    /// The folder blobs are kept in (`blobDir`, else the data directory's own).
    package var blobFolder: String
    package var s3Endpoint: String
    package var s3Region: String
    package var s3PathStyle: Bool
    package var webhookKeyFile: String
    package var sqliteReaders: Int
    /// The server's event loops: each reads SQLite in place on a connection of its own.
    package var eventLoops: Int
    package var sqliteOptimizeSeconds: Int
    package var databaseFileCheckSeconds: Int
    package var databasePoolSize: Int
    package var databaseHandlerThreads: Int
    package var databaseStatementTimeoutSeconds: Int
    package var retryAfterSeconds: Int

    init(_ config: ToursdConfig) {
        (dataDir, databaseUrl, migrationsDir) = (config.dataDir, config.databaseUrl, config.migrationsDir)
        (blobStore, blobDir, blobFolder) = (config.blobStore, config.blobDir, config.blobFolder)
        (s3Endpoint, s3Region, s3PathStyle) = (config.s3Endpoint, config.s3Region, config.s3PathStyle)
        webhookKeyFile = config.webhookKeyFile
        (sqliteReaders, sqliteOptimizeSeconds, databaseFileCheckSeconds) = (config.sqliteReaders, config.sqliteOptimizeSeconds, config.databaseFileCheckSeconds)
        eventLoops = config.server.eventLoops
        (databasePoolSize, databaseHandlerThreads) = (config.databasePoolSize, config.databaseHandlerThreads)
        (databaseStatementTimeoutSeconds, retryAfterSeconds) = (config.databaseStatementTimeoutSeconds, config.retryAfterSeconds)
    }
}

/// The service's own thread pools' sizes (`ServicePools`).
package struct PoolSettings: Sendable {
    package var ioThreads: Int
    package var ioThreadNiceness: Int
    package var previewThreads: Int
    package var webhookConcurrency: Int
    package var s3TransferThreads: Int

    init(_ config: ToursdConfig) {
        (ioThreads, ioThreadNiceness, previewThreads) = (config.ioThreads, config.ioThreadNiceness, config.previewThreads)
        (webhookConcurrency, s3TransferThreads) = (config.webhookConcurrency, config.s3TransferThreads)
    }
}

/// Where requests' spans are sent (`OTLPExporter`).
package struct TraceSettings: Sendable {
    package var endpoint: String
    package var queueSpans: Int
    package var timeoutMs: Int
    package var serviceName: String
    package var outageLogSeconds: Int

    init(_ config: ToursdConfig) {
        (endpoint, queueSpans, timeoutMs) = (config.otlpEndpoint, config.otlpQueueSpans, config.otlpTimeoutMs)
        (serviceName, outageLogSeconds) = (config.otlpServiceName, config.outageLogSeconds)
    }
}

extension ToursdConfig {
    /// The sections its parts are handed.
    public var storage: StorageSettings { StorageSettings(self) }
    package var pools: PoolSettings { PoolSettings(self) }
    package var traces: TraceSettings { TraceSettings(self) }
}
