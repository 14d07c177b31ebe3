// swift-tools-version:6.0
import PackageDescription

// The folder tree is the architecture: C libraries at the bottom, the HTTP layer and the
// SQLite layer beside each other (neither knows of tours), the sync service above them,
// and thin executables on top. The client library never imports the server.
// Every module's name carries our prefix (NT, CNT for C), so that the library sits in any
// host's package graph beside swift-log's Logging, Vapor's SQLKit or sqlite-nio's CSQLite.
let package = Package(
    name: "NoughtyTours",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "toursd", targets: ["toursd"]),
        .executable(name: "tours", targets: ["tours"]),
        .library(name: "NoughtyTours", targets: ["NoughtyTours"]),
    ],
    targets: [
        // System libraries, found through pkg-config; typed static-inline shims only.
        .systemLibrary(name: "CNTSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CNTCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CNTCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CNTPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CNTTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CNTPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CNTHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CNTCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev"])]),
        // Linux calls Glibc's Swift module does not export (epoll, eventfd, sync_file_range).
        .systemLibrary(name: "CNTLinux"),

        // Shared building blocks.
        // libcurl's one set-up per process, for the client, the bucket and the webhooks.
        .target(name: "NTCurlRuntime", dependencies: ["CNTCurl"]),
        .target(name: "NTLogging", dependencies: ["NTThreadPools"]),
        .target(name: "NTMetrics"),
        .target(name: "NTTracing"),
        .target(name: "NTHashing", dependencies: ["CNTCrypto"]),
        // The fixed thread pools that blocking calls (disk, SQLite) run on, off every event loop.
        .target(name: "NTThreadPools", dependencies: ["CNTLinux"]),
        // What the server's storage is written against: values, rows, connections, storages.
        .target(name: "NTSQLKit", dependencies: ["NTThreadPools"]),
        .target(name: "NTSQLiteDB", dependencies: ["CNTSQLite", "CNTLinux", "NTSQLKit", "NTThreadPools"]),
        // Who may act on a thing now: one locker, in one daemon (here) or across daemons (its
        // PostgreSQL adapter, in NTPostgresDB).
        .target(name: "NTCoordination", dependencies: ["NTSQLKit"]),
        // PostgreSQL through libpq, behind the same seams: for several toursd sharing one state.
        .target(name: "NTPostgresDB", dependencies: ["CNTPostgres", "CNTLinux", "NTSQLKit", "NTThreadPools", "NTCoordination", "NTHashing"]),
        .target(name: "NTHTTPCore", dependencies: ["NTLogging", "CNTLinux", "NTThreadPools"]),
        // The API's documents and request bodies as types, with our own JSON reader and
        // writer: what server and client both speak (neither imports the other).
        .target(name: "NTAPIModel", dependencies: ["NTLogging"]),
        // Smaller JPEGs and cube tiles of panoramas (JPEG with libjpeg-turbo, PNG with
        // libpng, HEIC with libheif): knows images, not tours.
        .target(name: "NTImagePreviews", dependencies: ["CNTTurboJPEG", "CNTPNG", "CNTHeif"]),
        // The tour viewer's pages as pure functions of the API's documents: HTML, SVG, the
        // viewer's script. Knows neither HTTP nor storage.
        // Floor plans to publish: laid out once, written as SVG, or as PDF and PNG through cairo.
        // Knows neither HTTP nor storage.
        .target(name: "NTFloorPlans", dependencies: ["NTAPIModel", "NTHashing", "NTImagePreviews", "CNTCairo", "CNTTurboJPEG"]),
        .target(name: "NTTourViewer", dependencies: ["NTAPIModel", "NTFloorPlans"],
                resources: ["shared", "view", "dollhouse", "travel", "panel", "walk"].map { .embedInCode("Assets/script/\($0).js") }),

        // The server: the sync service and its thin executable.
        // One request to a server toursd does not trust (a webhook receiver), through libcurl.
        .target(name: "NTOutboundHTTP", dependencies: ["CNTCurl", "NTCurlRuntime"]),
        // An S3-compatible bucket through libcurl (SigV4): objects and multipart uploads, on
        // transfer threads of its own. Knows buckets, not tours.
        .target(name: "NTObjectStorage", dependencies: ["CNTCurl", "NTCurlRuntime", "NTHashing", "NTThreadPools", "NTMetrics"]),
        // The sync service, in layers (docs/storage.md "The service's modules"): each module
        // knows only those listed before it.
        // The service's vocabulary: its errors, identifiers, clock, the configuration and its
        // sections, the lock order, the outage log.
        .target(name: "NTServiceModel", dependencies: ["NTAPIModel", "NTHTTPCore", "NTHashing", "NTLogging", "NTSQLKit"]),
        // The rows and the files: the SQL stores of both dialects, the blob folder and bucket,
        // previews and tiles on disk, backups. Knows no HTTP.
        .target(name: "NTServiceStorage", dependencies: ["NTServiceModel", "CNTLinux", "NTAPIModel", "NTHashing", "NTImagePreviews", "NTLogging", "NTMetrics", "NTObjectStorage", "NTSQLKit", "NTSQLiteDB", "NTThreadPools", "NTTracing"]),
        // What a tenant does with its tours: properties, floors and plans, panoramas and their
        // images, share links, grants and tokens, branding. Knows no HTTP.
        .target(name: "NTTourUseCases", dependencies: ["NTServiceModel", "NTServiceStorage", "NTAPIModel", "NTFloorPlans", "NTCoordination", "NTHashing", "NTImagePreviews", "NTLogging", "NTThreadPools", "NTTracing"]),
        // The HTTP edge: principals and their authentication, route groups typed by principal,
        // commands and access rules, errors and stored files as HTTP answers.
        .target(name: "NTServiceHTTP", dependencies: ["NTServiceModel", "NTServiceStorage", "NTTourUseCases", "NTAPIModel", "NTHTTPCore", "NTHashing", "NTImagePreviews", "NTLogging", "NTSQLKit", "NTThreadPools"]),
        // Resumable uploads, tus and the IETF draft: one folder, one owner of the offset.
        .target(name: "NTUploads", dependencies: ["NTServiceModel", "NTServiceStorage", "NTTourUseCases", "NTServiceHTTP", "CNTLinux", "NTAPIModel", "NTCoordination", "NTHTTPCore", "NTHashing", "NTLogging", "NTSQLKit", "NTThreadPools"]),
        // Webhooks and the event feed.
        .target(name: "NTWebhooks", dependencies: ["NTServiceModel", "NTServiceStorage", "NTServiceHTTP", "NTAPIModel", "NTHTTPCore", "NTHashing", "NTLogging", "NTMetrics", "NTOutboundHTTP", "NTSQLKit", "NTThreadPools", "NTTracing"]),
        // The tour viewer's pages as HTTP: the signed-in app and share links.
        .target(name: "NTViewerService", dependencies: ["NTServiceModel", "NTServiceStorage", "NTTourUseCases", "NTServiceHTTP", "NTAPIModel", "NTHTTPCore", "NTHashing", "NTImagePreviews", "NTLogging", "NTSQLKit", "NTTourViewer"]),
        // The API's routes and the composition: the deployment decided once, the parts built
        // and handed what they use, the background jobs, the commands of toursd.
        .target(name: "NTTourService", dependencies: ["NTServiceModel", "NTServiceStorage", "NTTourUseCases", "NTServiceHTTP", "NTUploads", "NTWebhooks", "NTViewerService", "NTAPIModel", "NTImagePreviews", "NTHTTPCore", "NTLogging", "NTHashing", "NTSQLiteDB", "NTPostgresDB", "NTCoordination", "NTThreadPools", "CNTLinux", "NTOutboundHTTP", "NTObjectStorage", "NTMetrics", "NTTracing"]),
        .executableTarget(name: "toursd", dependencies: ["NTTourService", "NTServiceModel", "NTServiceStorage", "NTAPIModel", "NTThreadPools", "CNTLinux"]),

        // The client: library and thin command line.
        .target(name: "NoughtyTours", dependencies: ["NTAPIModel", "CNTCurl", "NTCurlRuntime", "NTSQLiteDB", "NTHashing", "NTThreadPools"]),
        .executableTarget(name: "tours", dependencies: ["NoughtyTours"]),
        // What make bench runs against the client library.
        .executableTarget(name: "ClientBench", dependencies: ["NoughtyTours"], path: "bench/ClientBench"),
        // Our JSON beside Foundation's, on the API's documents (make bench).
        .executableTarget(name: "DocumentBench", dependencies: ["NTAPIModel"], path: "bench/DocumentBench"),
        // The durable reference make bench measures toursd's uploads against.
        .executableTarget(name: "DurableReceiver", dependencies: ["NTHashing"], path: "bench/DurableReceiver"),

        // What the loopback tests and the test programs (Soak, SyncWorker) share: a raw HTTP
        // client, a command runner, servers to start. Imports no test framework.
        .target(name: "TestSupport", dependencies: ["CNTLinux", "CNTPNG", "CNTHeif", "CNTTurboJPEG"], path: "Tests/TestSupport"),
        // Swift Testing traits the test targets share: a test target itself, so no build but the
        // tests' ever compiles it (the toolchain has no static Testing module for release).
        .testTarget(name: "TestTraits", path: "Tests/TestTraits"),
        .testTarget(name: "LoggingTests", dependencies: ["NTLogging", "NTThreadPools", "TestSupport"]),
        .testTarget(name: "TracingTests", dependencies: ["NTTracing"]),
        .testTarget(name: "APIModelTests", dependencies: ["NTAPIModel"]),
        .testTarget(name: "FloorPlansTests", dependencies: ["NTFloorPlans", "NTAPIModel", "TestSupport"]),
        .testTarget(name: "TourViewerTests", dependencies: ["NTTourViewer", "NTFloorPlans", "NTAPIModel", "TestSupport"]),
        .testTarget(name: "ImagePreviewsTests", dependencies: ["NTImagePreviews", "CNTTurboJPEG", "TestSupport"]),
        .testTarget(name: "HTTPCoreTests", dependencies: ["NTHTTPCore", "NTLogging", "NTThreadPools", "TestSupport", "TestTraits"]),
        .testTarget(name: "HashingTests", dependencies: ["NTHashing"]),
        .testTarget(name: "ObjectStorageTests", dependencies: ["NTObjectStorage", "NTHashing", "NTThreadPools", "TestSupport"]),
        .testTarget(name: "ThreadPoolsTests", dependencies: ["NTThreadPools", "TestSupport"]),
        .testTarget(name: "SQLiteDBTests", dependencies: ["NTSQLiteDB", "NTThreadPools", "CNTLinux", "TestSupport"]),
        .testTarget(name: "PostgresDBTests", dependencies: ["NTPostgresDB", "TestSupport", "TestTraits"]),
        // The locker's contract, run on each adapter (in process; two daemons on PostgreSQL).
        .testTarget(name: "CoordinationTests", dependencies: ["NTCoordination", "NTPostgresDB", "NTSQLKit", "TestSupport", "TestTraits"]),
        .testTarget(name: "ServiceModelTests", dependencies: ["NTServiceModel", "NTAPIModel", "NTHTTPCore", "NTLogging", "TestSupport", "TestTraits"]),
        .testTarget(name: "ServiceStorageTests", dependencies: ["NTServiceStorage", "NTServiceModel", "NTHashing", "NTObjectStorage", "NTThreadPools", "NTSQLKit", "TestSupport", "TestTraits"]),
        .testTarget(name: "TourUseCasesTests", dependencies: ["NTTourUseCases"]),
        .testTarget(name: "ServiceHTTPTests", dependencies: ["NTServiceHTTP", "NTServiceModel", "NTServiceStorage", "NTUploads", "NTAPIModel", "NTHTTPCore", "TestSupport", "TestTraits"]),
        .testTarget(name: "UploadsTests", dependencies: ["NTUploads", "NTServiceModel", "NTServiceStorage", "NTHTTPCore", "NTThreadPools", "NTCoordination", "NTAPIModel", "NTSQLKit", "NTHashing", "TestSupport", "TestTraits"]),
        .testTarget(name: "WebhooksTests", dependencies: ["NTWebhooks", "NTServiceModel", "NTAPIModel", "NTHashing"]),
        .testTarget(name: "ViewerServiceTests", dependencies: ["NTViewerService"]),
        .testTarget(name: "TourServiceTests", dependencies: ["NTTourService", "NTServiceModel", "NTServiceStorage", "NTTourUseCases", "NTServiceHTTP", "NTUploads", "NTWebhooks", "NTViewerService", "NTCoordination", "NTHTTPCore", "NTHashing", "NTImagePreviews", "NTLogging", "NTPostgresDB", "NTObjectStorage", "TestSupport", "TestTraits"]),
        .testTarget(name: "NoughtyToursTests", dependencies: ["NoughtyTours", "NTAPIModel", "NTCurlRuntime", "NTSQLiteDB", "TestSupport", "TestTraits"]),
        // The fuzz targets' functions on their seed corpus and past crashes (make fuzz runs libFuzzer).
        .testTarget(name: "FuzzReplayTests", dependencies: ["NTHTTPCore", "NTTourService", "NTServiceModel", "NTServiceStorage", "NTServiceHTTP", "NTUploads", "NTWebhooks", "NTAPIModel", "NTImagePreviews", "NTTourViewer", "NTFloorPlans"],
                    path: "Tests/Fuzz", exclude: ["corpus", "run.sh"]),
        // One test per finding of the attack probe, black box, against the release toursd.
        .testTarget(name: "AttackTests", dependencies: ["TestSupport", "NTImagePreviews", "TestTraits"]),
        // A client process the library's tests start and kill mid-drain.
        .executableTarget(name: "SyncWorker", dependencies: ["NoughtyTours", "NTHashing", "TestSupport"], path: "Tests/SyncWorker"),
        // make soak: clients through a chaos proxy while toursd is killed; checks both sides after.
        .executableTarget(name: "Soak", dependencies: ["TestSupport", "NTSQLiteDB", "NTHashing"], path: "Tests/Soak"),
    ],
    swiftLanguageModes: [.v6]
)
