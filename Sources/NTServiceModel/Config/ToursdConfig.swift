import Foundation
import NTHTTPCore
import NTLogging

/// Everything toursd can be told: where it listens, where it keeps data, how it logs, and
/// every limit and timeout. Defaults are the embedded configuration; a JSON file and then
/// command-line flags override them, key by key (keys as in `config/toursd.json`).
public struct ToursdConfig: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var dataDir = "./data"
    /// Empty: SQLite in `dataDir`, the embedded default; a `postgresql://` URL: PostgreSQL,
    /// which several daemons can share.
    public var databaseUrl = ""
    /// With PostgreSQL: connections lent to one read's or write's transaction at a time (from
    /// BEGIN to COMMIT; no thread is held meanwhile).
    public var databasePoolSize = 4
    /// With PostgreSQL: how long a statement may run (the server's statement_timeout); one
    /// second more without an answer and the connection is given up (503) and made again.
    public var databaseStatementTimeoutSeconds = 30
    /// With PostgreSQL: threads that run request handlers; 0: one per core.
    public var databaseHandlerThreads = 0
    /// While storage cannot be reached, its reason is logged when new and again every this
    /// many seconds (not once per refused request).
    public var outageLogSeconds = 60
    /// How often the figures of /metrics that take a query (the webhook backlog) are read.
    public var metricsRefreshSeconds = 5
    /// A file holding the token /metrics then asks for (`Authorization: Bearer …`); empty:
    /// /metrics needs none (keep it off public addresses then).
    public var metricsTokenFile = ""
    /// An OpenTelemetry collector's OTLP/HTTP traces URL (`http://collector:4318/v1/traces`);
    /// empty: no traces.
    public var otlpEndpoint = ""
    public var otlpServiceName = "toursd"
    /// How often spans are sent, and how long one sending may take.
    public var otlpExportMs = 1000
    public var otlpTimeoutMs = 5000
    /// Spans kept for the next sending at most; past that they are dropped (and counted).
    public var otlpQueueSpans = 20_000
    /// With PostgreSQL: connections on which requests wait for another daemon's lock (an
    /// upload it writes, a panorama it stores), one waiting request each.
    public var databaseLockWaitConnections = 4
    /// Where panoramas, world maps and partial uploads are kept; empty: `<dataDir>/blobs`. For
    /// several daemons, a folder all of them mount.
    public var blobDir = ""
    /// Where blobs are kept: `"directory"` (or empty) for `blobDir`, or `"s3://BUCKET/PREFIX"`
    /// for an S3-compatible bucket (docs/scale-out.md; endpoint, region and credentials from the
    /// AWS environment variables, else the keys below).
    public var blobStore = "directory"
    /// The bucket's endpoint when `AWS_ENDPOINT_URL_S3` and `AWS_ENDPOINT_URL` are unset;
    /// empty: AWS's own for the region.
    public var s3Endpoint = ""
    /// The bucket's region when `AWS_REGION` is unset.
    public var s3Region = "us-east-1"
    /// Path-style URLs (`endpoint/BUCKET/key`) even for a named endpoint (an IP address always).
    public var s3PathStyle = false
    /// The parts of a multipart upload, and the segments of a resumable upload in the bucket.
    public var s3PartBytes = 8 << 20
    /// With a bucket: a panorama's or world map's bytes are answered with a 302 to a presigned
    /// URL of the object (clients must reach the endpoint), not sent through toursd.
    public var s3PresignedReads = false
    /// How long such a URL works.
    public var s3PresignedSeconds = 300
    /// Threads that wait on the bucket (each with its own connection).
    public var s3TransferThreads = 16
    /// How long a connection to the bucket may take.
    public var s3ConnectTimeoutMs = 5000
    /// How long a transfer to or from the bucket may go without a byte before it is given up
    /// (the store is then unavailable: 503).
    public var s3StallSeconds = 30
    /// How often a call to the bucket no client waits on (a preview kept for the other
    /// daemons) is made when the store says it is unavailable, `retryAfterSeconds` apart.
    public var s3BackgroundAttempts = 3
    /// With a bucket: local copies of blobs (reads, previews and tiles come from them) are kept
    /// to this many bytes, the least recently used going first.
    public var blobCopyBytes = 1 << 30
    /// With a bucket: how often a page of its objects (and every multipart upload in progress)
    /// is checked against the rows, what no row names removed once older than
    /// `orphanGraceSeconds`.
    public var bucketSweepSeconds = 600
    /// With a shared database, the start-up sweep leaves files younger than this alone (another
    /// daemon may be between placing a file and committing its row).
    public var orphanGraceSeconds = 3600
    /// At start-up, files without a row are removed as left by an interrupted write only while there
    /// are at most this many; more, and toursd refuses to start (a database that cannot account
    /// for the files: restored without them, or the wrong one).
    public var orphanSweepLimit = 100
    /// How often toursd looks for its SQLite file between commits (each commit looks too): a
    /// file deleted or replaced under it makes /healthz degraded and every write a 503.
    public var databaseFileCheckSeconds = 1
    /// How often, at most, SQLite's planner statistics are refreshed (`PRAGMA optimize`, after a
    /// commit; also at start-up). Plans do not depend on them.
    public var sqliteOptimizeSeconds = 21_600
    /// With several daemons: how long a PATCH waits for the daemon writing its upload to stop
    /// (then 503 with Retry-After).
    public var uploadTakeoverSeconds = 10
    /// How long an offset retrieval (a tus HEAD or creation sent again, an IETF draft HEAD) lets
    /// a transfer still in flight end by itself (its client went away; its last bytes are still
    /// arriving): tus then answers the offset it left, the draft stops it.
    public var uploadTakeoverGraceMs = 1000
    /// Bearer tokens whose tenant a daemon remembers, so that a GET asks its token check beside
    /// the route's reads (`Authentication`); when full, it forgets them all and starts again.
    public var tokenCacheEntries = 10_000
    /// The shortest and longest lifetime a grant may be made with (`POST /v1/grants`).
    public var grantMinSeconds = 60
    public var grantMaxSeconds = 7 * 86_400
    /// Grants a tenant may hold unexpired and unrevoked at once (then 409).
    public var grantsPerTenant = 1000
    /// How long an expired grant is kept: until then its token is told to ask for a fresh one
    /// (`grant_expired`) rather than refused as unknown (a device back online after days).
    public var grantKeepDays = 30
    /// Properties one grant may name.
    public var grantMaxProperties = 100
    /// Unrevoked tokens a tenant may hold at once when made over HTTP (`POST /v1/tokens`).
    public var tokensPerTenant = 100
    /// Empty: the migrations built into toursd (from `migrations/<dialect>/`); else a folder
    /// of `NNNN_name.sql` files to apply instead (tests, or a fix applied by hand).
    public var migrationsDir = ""
    /// The threads that answer requests, each with a read connection of its own.
    public var sqliteReaders = 4
    /// Threads for blocking file work: writes, fsyncs, renames, hashing.
    public var ioThreads = 4
    /// How much lower than the request threads the file I/O threads run (nice 0–19).
    public var ioThreadNiceness = 19
    public var maxJsonBodyBytes = 1024 * 1024
    /// Arrays and objects nested deeper than this in a request body are a 400.
    public var maxJsonDepth = 64
    public var maxPlanBodyBytes = 16 * 1024 * 1024
    /// How far from the origin, in metres, a plan's outline point may be (400 past it).
    public var maxPlanCoordinateMetres = 100_000
    public var maxPanoramaBytes = 512 * 1024 * 1024
    public var maxWorldMapBytes = 256 * 1024 * 1024
    /// A long tus PATCH makes its bytes durable every this many (0: only at its end), so that a
    /// newer PATCH taking over from a connection that died unseen keeps them.
    public var uploadDurableStepBytes = 8 * 1024 * 1024
    public var uploadExpirySeconds = 24 * 3600
    /// What one tenant's unfinished uploads may hold at once: how many, and the bytes their
    /// Upload-Length reserves (507 past either).
    public var maxUnfinishedUploadsPerTenant = 1000
    public var maxUnfinishedUploadBytesPerTenant: Int = 64 << 30
    public var uploadSweepIntervalSeconds = 60
    /// Whether a draft resumable upload (an iOS URLSession upload) is told at once where it
    /// can resume, with an interim `104 Upload Resumption Supported`. Off behind a proxy that
    /// breaks on a 1xx other than 100 (nginx 1.22): explicit creations and plain uploads still
    /// work, without resumption of an upload cut before its final answer.
    public var resumableInterimResponses = true
    /// How long the event feed keeps an event (GET /v1/events).
    public var eventRetentionDays = 30
    /// The longest a feed request may wait for an event (`wait`, long-poll).
    public var maxEventWaitSeconds = 30
    /// How often a waiting feed request looks again for events other daemons committed (its
    /// own daemon's commits wake it at once).
    public var eventPollMs = 500
    /// A property's `tour.changed` comes once its tour has not changed for this long.
    public var tourChangedQuietSeconds = 30
    /// How often each daemon looks for tour changes that have settled.
    public var tourChangedCheckMs = 1000
    /// A tenant's webhook endpoints, at most.
    public var maxWebhooksPerTenant = 10
    /// How long an endpoint may keep failing before it is disabled (with a
    /// `webhook.disabled` event); its deliveries are retried with backoff until then.
    public var webhookRetryHours = 72
    /// The first retry's delay; each next one doubles it, up to `webhookBackoffMaxMs`, less a
    /// random part of up to half (jitter).
    public var webhookBackoffBaseMs = 5000
    public var webhookBackoffMaxMs = 3_600_000
    /// One delivery's time, connection and answer included.
    public var webhookTimeoutMs = 10_000
    /// Deliveries under way at once on this daemon (each endpoint has one at a time).
    public var webhookConcurrency = 4
    /// How often each daemon looks for endpoints with events to deliver.
    public var webhookPollMs = 1000
    /// How much of a receiver's answer body is read (the rest is not).
    public var webhookResponseBytes = 4096
    /// Attempts kept in each endpoint's delivery log.
    public var webhookDeliveryLog = 100
    /// Deliveries to loopback, private and link-local addresses (tests, a receiver on the same
    /// network); off, such a target's deliveries fail.
    public var webhookAllowPrivateTargets = false
    /// The file of the key webhook secrets are sealed under (32 random bytes, made on a first
    /// start; empty: `<dataDir>/webhook.key`). Daemons sharing a database share this file.
    public var webhookKeyFile = ""
    public var logLevel = "info"
    public var logFormat = "logfmt"
    /// A file to log to (reopened on SIGHUP, for rotation); empty: standard error.
    public var logFile = ""
    public var eventLoopThreads = 0
    public var backlog = 1024
    public var maxConnections = 1024
    /// Connections one peer address may hold (0: no cap; set it behind a local proxy).
    public var maxConnectionsPerAddress = 256
    public var retryAfterSeconds = 1
    public var maxHeadBytes = 16 * 1024
    public var readBufferBytes = 16 * 1024
    public var bodyBufferBytes = 64 * 1024
    public var headerTimeoutMs = 10_000
    public var idleTimeoutMs = 60_000
    public var bodyTimeoutMs = 30_000
    /// After bodyTimeoutMs, a body must average at least this many bytes a second (0: off).
    public var minBodyBytesPerSecond = 1024
    public var sendTimeoutMs = 30_000
    public var lingerTimeoutMs = 2_000
    public var maxDiscardBytes = 64 * 1024
    public var shutdownGraceMs = 10_000
    /// After SIGTERM, how long the daemon keeps serving while `/readyz` says draining, so that
    /// a balancer checking it stops sending first; then it stops accepting (0: at once).
    public var drainMs = 0
    public var bodyBatchBytes = 1 << 20
    public var bodyBufferBudgetBytes = 4 << 20
    /// The URL browsers reach toursd at (share links are printed with it; https makes the
    /// session cookie `Secure`). Empty: the request's Host over http.
    public var publicUrl = ""
    /// The line under the viewer's title; empty: the signed-in tenant's name.
    public var viewerSubtitle = ""
    /// The platform's name on a share link's pages (their bar and titles); empty, none: a
    /// visitor sees the tour, not the software behind it (the MLS form of a link).
    public var publicPlatformName = ""
    /// `publicPlatformName`, or nil for none.
    var sharePlatformName: String? { publicPlatformName.isEmpty ? nil : publicPlatformName }
    /// How long a viewer sign-in lasts.
    public var sessionLifetimeSeconds = 12 * 3600
    /// Failed sign-ins one client address may make in `signInWindowSeconds` before 429.
    public var signInFailuresAllowed = 5
    public var signInWindowSeconds = 300
    /// The lifetimes a share link may be given (docs/api.md: 1 hour to 90 days).
    public var shareMinSeconds = 3600
    public var shareMaxSeconds = 90 * 86_400
    /// A share link's lifetime when its maker names none (30 days); `shareLifetime` keeps it
    /// within the two above, however they are set.
    public var shareDefaultSeconds = 30 * 86_400
    public var shareLifetime: Int { min(max(shareDefaultSeconds, shareMinSeconds), shareMaxSeconds) }
    /// Live share links one tour may have at once (409 past it).
    public var maxSharesPerTour = 100
    /// The largest logo a tenant may upload (`PUT /v1/branding/logo`), before it is made again.
    public var maxLogoBytes = 4 << 20
    /// The width a logo is made again at, at most (it is shown 40 pixels high).
    public var logoWidth = 480
    /// How high above its floor a panorama's camera stands when its capture did not say
    /// (`position.height`): a phone or camera held for a capture. The dollhouse projects each
    /// photograph from there, and the viewer stands its markers on the floor below it.
    public var panoramaHeightMetres = 1.5
    /// At most one `share.viewed` event per link per this many minutes (the first opening after it).
    public var shareEventMinutes = 60
    /// The time one visit of a share link may count (its beacons' total), at most.
    public var shareVisitMaxSeconds = 4 * 3600
    /// Openings of one link counted per day; past it the pages are shown, the views not counted.
    public var shareVisitsPerDay = 10_000
    /// The origins one share link may let frame its embed form.
    public var maxFrameAncestorsPerShare = 8
    /// The preview widths served, ascending (`GET /v1/panoramas/{id}/preview?width=N`).
    public var previewWidths = [320, 1024, 4096]
    /// Proxies (a balancer) whose `X-Forwarded-For` names the client, for limits per client
    /// address (failed viewer sign-ins); empty: the connection's peer is the client.
    public var trustedProxies: [String] = []
    var trustedProxyAddresses: Set<[UInt8]> { Set(trustedProxies.compactMap(ClientAddress.parse)) }
    public var previewQuality = 82
    /// A JPEG claiming more pixels than this gets the placeholder instead of a preview.
    public var maxPreviewSourcePixels = 16_384 * 16_384
    /// Threads that decode images for previews, apart from the file I/O pool.
    public var previewThreads = 1
    /// Distinct previews waiting to be made; past it a preview request is a 503 with Retry-After.
    /// Identical requests share one making and count once.
    public var previewQueueLimit = 16
    /// The memory one preview's decoding may take: the coefficient buffer of a progressive or
    /// multi-scan JPEG, or the decoded pixels; a JPEG needing more gets the placeholder.
    public var maxPreviewDecodeBytes = 256 << 20
    /// Scans a JPEG may have for a preview to be made of it (each is a pass over the coefficients).
    public var maxPreviewScans = 64
    /// Images a HEIC may hold for a preview to be made of it (a grid image's tiles are each
    /// one: an iPhone's 48-megapixel photo is a grid of 192).
    public var maxPreviewItems = 1024
    /// A panorama still processing this long after it was stored (its daemon stopped) is
    /// processed again by the sweep.
    public var processingRetrySeconds = 600
    /// Stored panoramas waiting for their processing in one daemon; one past it is processed
    /// by the sweep, `processingRetrySeconds` after it was stored.
    public var processingQueueLimit = 1024
    /// Panoramas at least this wide are cut into cube faces and tiles for the viewer (drawn at
    /// once from a small preview, then sharp where looked at); narrower ones are drawn from
    /// their largest preview.
    public var tileMinWidth = 6000
    /// The memory cutting one panorama into tiles may take for its decoded planes (a 16384 ×
    /// 8192 JPEG: 192 MiB), beside the faces it makes one at a time.
    public var maxTileDecodeBytes = 512 << 20
    /// Panoramas waiting for their tiles; past it a panorama is tiled when next viewed.
    public var tileQueueLimit = 64
    /// Only a panorama's shape is tiled: at most this many times as wide as tall (a full
    /// sphere is 2; a 65500 × 16 strip is not a panorama to cut into 20480-px faces).
    public var tileMaxAspectRatio = 4
    /// The largest cube face cut (a 16384-wide panorama's is 5120); it caps the levels and
    /// the tile files of any panorama.
    public var maxTileFaceSize = 8192
    /// A partial panorama is tiled as the whole sphere it lies on while that sphere holds at
    /// most this many times its pixels; a smaller crop (or one whose GPano claims a far larger
    /// sphere than its pixels show) at the resolution of a sphere of this many times its pixels.
    public var tileMaxSpherePerPixel = 4
    /// The CPU time cutting one panorama may take; past it the cutting stops, the preview stands in.
    public var maxTileCpuSeconds = 120
    /// The memory all image work of the daemon may hold at once, previews and tiles together:
    /// each takes its share, from the image's headers, before decoding, and waits for room.
    public var imageMemoryBytes = 512 << 20
    /// A published floor plan's PNG: its width when the caller picks none, and the widest it
    /// may pick (a 4096-wide A4 sheet holds 95 MB of pixels while it is drawn, within
    /// `imageMemoryBytes`).
    public var floorPlanPngWidth = 2000
    public var maxFloorPlanPngWidth = 4096
    /// The bytes of published floor plans kept drawn, by what they show (the least recently
    /// asked for go first).
    public var floorPlanCacheBytes = 32 << 20
    /// Properties on one page of the viewer's list.
    public var viewerPageSize = 25
    /// The most a viewer form (sign-in, share link) may post.
    public var maxFormBodyBytes = 16 * 1024

    public init() {}

    /// The keys, each with how to set it from text.
    private static let setters: [String: @Sendable (inout ToursdConfig, String) -> Bool] = [
        "host": { $0.host = $1; return (try? SocketAddress(host: $1, port: 0)) != nil },
        "port": { config, text in setInt(&config.port, text, 0...65_535) },
        "dataDir": { $0.dataDir = $1; return !$1.isEmpty },
        "migrationsDir": { $0.migrationsDir = $1; return true },
        "databaseUrl": { $0.databaseUrl = $1; return $1.isEmpty || $1.hasPrefix("postgresql://") || $1.hasPrefix("postgres://") },
        "databasePoolSize": { config, text in setInt(&config.databasePoolSize, text, 1...1000) },
        "sqliteOptimizeSeconds": { config, text in setInt(&config.sqliteOptimizeSeconds, text, 60...604_800) },
        "databaseStatementTimeoutSeconds": { config, text in setInt(&config.databaseStatementTimeoutSeconds, text, 1...3600) },
        "databaseHandlerThreads": { config, text in setInt(&config.databaseHandlerThreads, text, 0...1000) },
        "outageLogSeconds": { config, text in setInt(&config.outageLogSeconds, text, 1...86_400) },
        "metricsRefreshSeconds": { config, text in setInt(&config.metricsRefreshSeconds, text, 1...3600) },
        "metricsTokenFile": { $0.metricsTokenFile = $1; return true },
        "otlpEndpoint": { $0.otlpEndpoint = $1; return true },
        "otlpServiceName": { $0.otlpServiceName = $1; return !$1.isEmpty },
        "otlpExportMs": { config, text in setInt(&config.otlpExportMs, text, 50...600_000) },
        "otlpTimeoutMs": { config, text in setInt(&config.otlpTimeoutMs, text, 100...60_000) },
        "otlpQueueSpans": { config, text in setInt(&config.otlpQueueSpans, text, 100...10_000_000) },
        "databaseLockWaitConnections": { config, text in setInt(&config.databaseLockWaitConnections, text, 1...100) },
        "blobDir": { $0.blobDir = $1; return true },
        "blobStore": { $0.blobStore = $1; return $1.isEmpty || $1 == "directory" || $1.hasPrefix("s3://") },
        "s3Endpoint": { $0.s3Endpoint = $1; return true },
        "s3Region": { $0.s3Region = $1; return true },
        "s3PathStyle": { config, text in setBool(&config.s3PathStyle, text) },
        "s3PartBytes": { config, text in setInt(&config.s3PartBytes, text, 5 << 20...1 << 30) },
        "s3PresignedReads": { config, text in setBool(&config.s3PresignedReads, text) },
        "s3PresignedSeconds": { config, text in setInt(&config.s3PresignedSeconds, text, 1...604_800) },
        "s3TransferThreads": { config, text in setInt(&config.s3TransferThreads, text, 1...256) },
        "s3ConnectTimeoutMs": { config, text in setInt(&config.s3ConnectTimeoutMs, text, 100...120_000) },
        "s3StallSeconds": { config, text in setInt(&config.s3StallSeconds, text, 1...3600) },
        "s3BackgroundAttempts": { config, text in setInt(&config.s3BackgroundAttempts, text, 1...10) },
        "blobCopyBytes": { config, text in setInt(&config.blobCopyBytes, text, 0...1 << 50) },
        "bucketSweepSeconds": { config, text in setInt(&config.bucketSweepSeconds, text, 1...86_400) },
        "orphanGraceSeconds": { config, text in setInt(&config.orphanGraceSeconds, text, 0...30 * 86_400) },
        "orphanSweepLimit": { config, text in setInt(&config.orphanSweepLimit, text, 0...10_000_000) },
        "databaseFileCheckSeconds": { config, text in setInt(&config.databaseFileCheckSeconds, text, 1...3600) },
        "uploadTakeoverSeconds": { config, text in setInt(&config.uploadTakeoverSeconds, text, 1...600) },
        "uploadTakeoverGraceMs": { config, text in setInt(&config.uploadTakeoverGraceMs, text, 0...60_000) },
        "tokenCacheEntries": { config, text in setInt(&config.tokenCacheEntries, text, 1...10_000_000) },
        "grantMinSeconds": { config, text in setInt(&config.grantMinSeconds, text, 1...365 * 86_400) },
        "grantMaxSeconds": { config, text in setInt(&config.grantMaxSeconds, text, 1...365 * 86_400) },
        "grantsPerTenant": { config, text in setInt(&config.grantsPerTenant, text, 1...10_000_000) },
        "grantMaxProperties": { config, text in setInt(&config.grantMaxProperties, text, 1...10_000) },
        "grantKeepDays": { config, text in setInt(&config.grantKeepDays, text, 0...3650) },
        "tokensPerTenant": { config, text in setInt(&config.tokensPerTenant, text, 1...100_000) },
        "sqliteReaders": { config, text in setInt(&config.sqliteReaders, text, 1...64) },
        "ioThreads": { config, text in setInt(&config.ioThreads, text, 1...256) },
        "ioThreadNiceness": { config, text in setInt(&config.ioThreadNiceness, text, 0...19) },
        "bodyBatchBytes": { config, text in setInt(&config.bodyBatchBytes, text, 4096...1 << 30) },
        "bodyBufferBudgetBytes": { config, text in setInt(&config.bodyBufferBudgetBytes, text, 8192...1 << 34) },
        "maxJsonBodyBytes": { config, text in setInt(&config.maxJsonBodyBytes, text, 1024...1_073_741_824) },
        "maxJsonDepth": { config, text in setInt(&config.maxJsonDepth, text, 8...1024) },
        "maxPlanBodyBytes": { config, text in setInt(&config.maxPlanBodyBytes, text, 1024...1_073_741_824) },
        "maxPlanCoordinateMetres": { config, text in setInt(&config.maxPlanCoordinateMetres, text, 1...10_000_000) },
        "maxPanoramaBytes": { config, text in setInt(&config.maxPanoramaBytes, text, 1...1 << 40) },
        "maxWorldMapBytes": { config, text in setInt(&config.maxWorldMapBytes, text, 1...1 << 40) },
        "uploadDurableStepBytes": { config, text in setInt(&config.uploadDurableStepBytes, text, 0...1 << 30) },
        "uploadExpirySeconds": { config, text in setInt(&config.uploadExpirySeconds, text, 1...365 * 24 * 3600) },
        "maxUnfinishedUploadsPerTenant": { config, text in setInt(&config.maxUnfinishedUploadsPerTenant, text, 1...10_000_000) },
        "maxUnfinishedUploadBytesPerTenant": { config, text in setInt(&config.maxUnfinishedUploadBytesPerTenant, text, 1...(1 << 50)) },
        "uploadSweepIntervalSeconds": { config, text in setInt(&config.uploadSweepIntervalSeconds, text, 1...86_400) },
        "resumableInterimResponses": { config, text in setBool(&config.resumableInterimResponses, text) },
        "eventRetentionDays": { config, text in setInt(&config.eventRetentionDays, text, 1...3650) },
        "maxEventWaitSeconds": { config, text in setInt(&config.maxEventWaitSeconds, text, 0...3600) },
        "eventPollMs": { config, text in setInt(&config.eventPollMs, text, 10...60_000) },
        "tourChangedQuietSeconds": { config, text in setInt(&config.tourChangedQuietSeconds, text, 0...86_400) },
        "tourChangedCheckMs": { config, text in setInt(&config.tourChangedCheckMs, text, 50...600_000) },
        "maxWebhooksPerTenant": { config, text in setInt(&config.maxWebhooksPerTenant, text, 0...1000) },
        "webhookRetryHours": { config, text in setInt(&config.webhookRetryHours, text, 1...720) },
        "webhookBackoffBaseMs": { config, text in setInt(&config.webhookBackoffBaseMs, text, 1...3_600_000) },
        "webhookBackoffMaxMs": { config, text in setInt(&config.webhookBackoffMaxMs, text, 1...86_400_000) },
        "webhookTimeoutMs": { config, text in setInt(&config.webhookTimeoutMs, text, 100...300_000) },
        "webhookConcurrency": { config, text in setInt(&config.webhookConcurrency, text, 1...256) },
        "webhookPollMs": { config, text in setInt(&config.webhookPollMs, text, 10...600_000) },
        "webhookResponseBytes": { config, text in setInt(&config.webhookResponseBytes, text, 0...1_048_576) },
        "webhookDeliveryLog": { config, text in setInt(&config.webhookDeliveryLog, text, 1...10_000) },
        "webhookAllowPrivateTargets": { config, text in setBool(&config.webhookAllowPrivateTargets, text) },
        "webhookKeyFile": { $0.webhookKeyFile = $1; return true },
        "logLevel": { $0.logLevel = $1; return LogLevel(name: $1) != nil },
        "logFormat": { $0.logFormat = $1; return LogFormat(rawValue: $1) != nil },
        "logFile": { $0.logFile = $1; return true },
        "eventLoopThreads": { config, text in setInt(&config.eventLoopThreads, text, 0...256) },
        "backlog": { config, text in setInt(&config.backlog, text, 1...65_535) },
        "maxConnections": { config, text in setInt(&config.maxConnections, text, 1...1_000_000) },
        "maxConnectionsPerAddress": { config, text in setInt(&config.maxConnectionsPerAddress, text, 0...1_000_000) },
        "retryAfterSeconds": { config, text in setInt(&config.retryAfterSeconds, text, 0...3600) },
        "maxHeadBytes": { config, text in setInt(&config.maxHeadBytes, text, 1024...1_048_576) },
        "readBufferBytes": { config, text in setInt(&config.readBufferBytes, text, 4096...16_777_216) },
        "bodyBufferBytes": { config, text in setInt(&config.bodyBufferBytes, text, 4096...16_777_216) },
        "headerTimeoutMs": { config, text in setInt(&config.headerTimeoutMs, text, 1...3_600_000) },
        "idleTimeoutMs": { config, text in setInt(&config.idleTimeoutMs, text, 1...3_600_000) },
        "bodyTimeoutMs": { config, text in setInt(&config.bodyTimeoutMs, text, 1...3_600_000) },
        "minBodyBytesPerSecond": { config, text in setInt(&config.minBodyBytesPerSecond, text, 0...(1 << 30)) },
        "sendTimeoutMs": { config, text in setInt(&config.sendTimeoutMs, text, 1...3_600_000) },
        "lingerTimeoutMs": { config, text in setInt(&config.lingerTimeoutMs, text, 0...60_000) },
        "maxDiscardBytes": { config, text in setInt(&config.maxDiscardBytes, text, 0...1_073_741_824) },
        "shutdownGraceMs": { config, text in setInt(&config.shutdownGraceMs, text, 0...3_600_000) },
        "drainMs": { config, text in setInt(&config.drainMs, text, 0...600_000) },
        "publicUrl": { config, text in
            config.publicUrl = text.hasSuffix("/") ? String(text.dropLast()) : text
            return text.isEmpty || text.hasPrefix("http://") || text.hasPrefix("https://")
        },
        "viewerSubtitle": { $0.viewerSubtitle = $1; return $1.utf8.count <= 200 },
        "publicPlatformName": { $0.publicPlatformName = $1; return $1.utf8.count <= 100 },
        "sessionLifetimeSeconds": { config, text in setInt(&config.sessionLifetimeSeconds, text, 60...90 * 86_400) },
        "signInFailuresAllowed": { config, text in setInt(&config.signInFailuresAllowed, text, 1...1000) },
        "signInWindowSeconds": { config, text in setInt(&config.signInWindowSeconds, text, 1...86_400) },
        "shareMinSeconds": { config, text in setInt(&config.shareMinSeconds, text, 1...365 * 86_400) },
        "shareMaxSeconds": { config, text in setInt(&config.shareMaxSeconds, text, 1...10 * 365 * 86_400) },
        "shareDefaultSeconds": { config, text in setInt(&config.shareDefaultSeconds, text, 1...10 * 365 * 86_400) },
        "maxSharesPerTour": { config, text in setInt(&config.maxSharesPerTour, text, 1...1_000_000) },
        "maxLogoBytes": { config, text in setInt(&config.maxLogoBytes, text, 1024...64 << 20) },
        "logoWidth": { config, text in setInt(&config.logoWidth, text, 64...2048) },
        "panoramaHeightMetres": { config, text in setDouble(&config.panoramaHeightMetres, text, 0.1...10) },
        "shareEventMinutes": { config, text in setInt(&config.shareEventMinutes, text, 1...7 * 24 * 60) },
        "shareVisitMaxSeconds": { config, text in setInt(&config.shareVisitMaxSeconds, text, 60...86_400) },
        "shareVisitsPerDay": { config, text in setInt(&config.shareVisitsPerDay, text, 1...10_000_000) },
        "maxFrameAncestorsPerShare": { config, text in setInt(&config.maxFrameAncestorsPerShare, text, 0...64) },
        "previewWidths": { config, text in
            let widths = text.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !widths.isEmpty, widths.count == text.split(separator: ",").count, widths.allSatisfy({ (16...8192).contains($0) }),
                  widths == widths.sorted(), Set(widths).count == widths.count else { return false }
            config.previewWidths = widths
            return true
        },
        "trustedProxies": { config, text in
            let entries = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard entries.allSatisfy({ ClientAddress.parse($0) != nil }) else { return false }
            config.trustedProxies = entries
            return true
        },
        "previewQuality": { config, text in setInt(&config.previewQuality, text, 1...100) },
        "maxPreviewSourcePixels": { config, text in setInt(&config.maxPreviewSourcePixels, text, 1...(1 << 32)) },
        "previewThreads": { config, text in setInt(&config.previewThreads, text, 1...64) },
        "previewQueueLimit": { config, text in setInt(&config.previewQueueLimit, text, 1...100_000) },
        "maxPreviewDecodeBytes": { config, text in setInt(&config.maxPreviewDecodeBytes, text, 1 << 20...1 << 36) },
        "maxPreviewScans": { config, text in setInt(&config.maxPreviewScans, text, 1...10_000) },
        "maxPreviewItems": { config, text in setInt(&config.maxPreviewItems, text, 1...100_000) },
        "processingRetrySeconds": { config, text in setInt(&config.processingRetrySeconds, text, 1...86_400) },
        "processingQueueLimit": { config, text in setInt(&config.processingQueueLimit, text, 1...1_000_000) },
        "tileMinWidth": { config, text in setInt(&config.tileMinWidth, text, 1...(1 << 20)) },
        "maxTileDecodeBytes": { config, text in setInt(&config.maxTileDecodeBytes, text, 1 << 20...1 << 36) },
        "tileQueueLimit": { config, text in setInt(&config.tileQueueLimit, text, 1...100_000) },
        "tileMaxAspectRatio": { config, text in setInt(&config.tileMaxAspectRatio, text, 1...64) },
        "maxTileFaceSize": { config, text in setInt(&config.maxTileFaceSize, text, 512...32_768) },
        "tileMaxSpherePerPixel": { config, text in setInt(&config.tileMaxSpherePerPixel, text, 1...64) },
        "maxTileCpuSeconds": { config, text in setInt(&config.maxTileCpuSeconds, text, 1...86_400) },
        "imageMemoryBytes": { config, text in setInt(&config.imageMemoryBytes, text, 16 << 20...1 << 40) },
        "floorPlanPngWidth": { config, text in setInt(&config.floorPlanPngWidth, text, 200...8192) },
        "maxFloorPlanPngWidth": { config, text in setInt(&config.maxFloorPlanPngWidth, text, 200...8192) },
        "floorPlanCacheBytes": { config, text in setInt(&config.floorPlanCacheBytes, text, 0...1 << 34) },
        "viewerPageSize": { config, text in setInt(&config.viewerPageSize, text, 1...200) },
        "maxFormBodyBytes": { config, text in setInt(&config.maxFormBodyBytes, text, 1024...1_048_576) },
    ]

    public static var keys: [String] { setters.keys.sorted() }

    /// The keys a reload (SIGHUP) applies while serving: the log level and file, and what
    /// `HTTPServer.updateLimits` changes. The others need a restart.
    public static let liveKeys: Set<String> = [
        "logLevel", "logFile", "maxConnections", "retryAfterSeconds", "headerTimeoutMs", "idleTimeoutMs", "bodyTimeoutMs",
        "sendTimeoutMs", "lingerTimeoutMs", "maxDiscardBytes", "shutdownGraceMs", "drainMs",
    ]

    /// Every key with its value as text, in key order, secrets masked (`Redaction`): what
    /// check-config prints.
    public var printableValues: [(key: String, value: String)] {
        values.map { $0.key == "databaseUrl" ? ($0.key, Redaction.databaseUrl($0.value)) : $0 }
    }

    /// Every key with its value as text, in key order.
    public var values: [(key: String, value: String)] {
        let mirror = Dictionary(uniqueKeysWithValues: Mirror(reflecting: self).children.compactMap { child in
            child.label.map { label in
                // Lists print as the config file writes them: "320,1024,4096".
                (label, (child.value as? [Int]).map { $0.map(String.init).joined(separator: ",") }
                    ?? (child.value as? [String]).map { $0.joined(separator: ",") } ?? "\(child.value)")
            }
        })
        return Self.keys.map { ($0, mirror[$0] ?? "") }
    }

    private static func setBool(_ field: inout Bool, _ text: String) -> Bool {
        switch text {
        case "true": field = true
        case "false": field = false
        default: return false
        }
        return true
    }

    private static func setInt(_ field: inout Int, _ text: String, _ range: ClosedRange<Int>) -> Bool {
        guard let value = Int(text), range.contains(value) else { return false }
        field = value
        return true
    }

    private static func setDouble(_ field: inout Double, _ text: String, _ range: ClosedRange<Double>) -> Bool {
        guard let value = Double(text), value.isFinite, range.contains(value) else { return false }
        field = value
        return true
    }

    /// Keys of earlier versions, and why they went.
    static let retired = [
        "databaseReadPipelines": "each request handler thread (databaseHandlerThreads) now has the PostgreSQL connection its single-statement reads share",
        "eventLoop": "toursd watches its sockets with epoll only (eventLoopThreads sets how many loops)",
    ]

    /// Sets one key from its text form; the error names the key and the bad value.
    public mutating func set(_ key: String, _ text: String) throws(ConfigError) {
        if let reason = Self.retired[key] { throw ConfigError("\(key) is no longer a configuration key: \(reason); remove it") }
        guard let setter = Self.setters[key] else { throw ConfigError("unknown configuration key \"\(key)\"") }
        var copy = self
        guard setter(&copy, text) else { throw ConfigError("invalid value \"\(text)\" for \(key)") }
        self = copy
    }

    /// Applies a JSON object of keys and values (strings or numbers).
    public mutating func apply(json data: Data, source: String) throws(ConfigError) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigError("\(source) is not valid JSON")
        }
        guard let values = object as? [String: Any] else { throw ConfigError("\(source) must hold a JSON object") }
        for key in values.keys.sorted() {
            let text: String
            switch values[key] {
            case let string as String: text = string
            case let number as NSNumber where String(cString: number.objCType) != "c": // "c": a JSON boolean
                text = number.stringValue
            case let flag as Bool: text = flag ? "true" : "false"
            default: throw ConfigError("\(source): \(key) must be a string, a number or a boolean")
            }
            do throws(ConfigError) {
                try set(key, text)
            } catch {
                throw ConfigError("\(source): \(error.message)")
            }
        }
    }

    /// What no single key can check: the relations between keys, once every source (file,
    /// environment, flags) is applied, in whatever order they came.
    public func checkRelations() throws(ConfigError) {
        guard shareMinSeconds <= shareMaxSeconds else {
            throw ConfigError("shareMinSeconds (\(shareMinSeconds)) is more than shareMaxSeconds (\(shareMaxSeconds))")
        }
        guard grantMinSeconds <= grantMaxSeconds else {
            throw ConfigError("grantMinSeconds (\(grantMinSeconds)) is more than grantMaxSeconds (\(grantMaxSeconds))")
        }
    }

    /// Reads and applies a configuration file.
    public mutating func apply(file path: String) throws(ConfigError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigError("cannot read \(path)") }
        try apply(json: data, source: path)
    }

    /// The HTTP layer's part.
    public var server: ServerConfiguration {
        var server = ServerConfiguration()
        server.eventLoopCount = eventLoopThreads
        server.host = host
        server.port = UInt16(port)
        server.backlog = Int32(backlog)
        server.maxConnections = maxConnections
        server.retryAfterSeconds = retryAfterSeconds
        server.maxHeadBytes = maxHeadBytes
        server.readBufferBytes = readBufferBytes
        server.bodyBufferBytes = bodyBufferBytes
        server.headerTimeoutMilliseconds = headerTimeoutMs
        server.idleTimeoutMilliseconds = idleTimeoutMs
        server.bodyTimeoutMilliseconds = bodyTimeoutMs
        server.minBodyBytesPerSecond = minBodyBytesPerSecond
        server.maxConnectionsPerAddress = maxConnectionsPerAddress
        server.sendTimeoutMilliseconds = sendTimeoutMs
        server.lingerTimeoutMilliseconds = lingerTimeoutMs
        server.maxDiscardBytes = Int64(maxDiscardBytes)
        server.shutdownGraceMilliseconds = shutdownGraceMs
        server.bodyBatchBytes = bodyBatchBytes
        server.bodyBufferBudgetBytes = bodyBufferBudgetBytes
        return server
    }

    /// The blob folder in use.
    public var blobFolder: String { blobDir.isEmpty ? dataDir + "/blobs" : blobDir }

    public var level: LogLevel { LogLevel(name: logLevel) ?? .info }
    public var format: LogFormat { LogFormat(rawValue: logFormat) ?? .logfmt }
}

/// A configuration or command-line mistake, said in words an operator can act on.
public struct ConfigError: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
