// swift-tools-version:6.0
import PackageDescription

// The folder tree is the architecture: C libraries at the bottom, the HTTP layer and the
// SQLite layer beside each other (neither knows of tours), the sync service above them,
// and thin executables on top. The client library never imports the server.
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
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        // Linux calls Glibc's Swift module does not export (epoll, eventfd, sync_file_range).
        .systemLibrary(name: "CLinux"),

        // Shared building blocks.
        .target(name: "Logging"),
        .target(name: "Hashing", dependencies: ["CCrypto"]),
        // The fixed thread pools that blocking calls (disk, SQLite) run on, off every event loop.
        .target(name: "ThreadPools", dependencies: ["CLinux"]),
        // What the server's storage is written against: values, rows, connections, storages.
        .target(name: "SQLKit", dependencies: ["ThreadPools"]),
        .target(name: "SQLiteDB", dependencies: ["CSQLite", "SQLKit", "ThreadPools"]),
        // PostgreSQL through libpq, behind the same seam: for several toursd sharing one state.
        .target(name: "PostgresDB", dependencies: ["CPostgres", "CLinux", "SQLKit", "ThreadPools"]),
        .target(name: "HTTPCore", dependencies: ["Logging", "CLinux", "ThreadPools"]),
        // The API's documents and request bodies as types, with our own JSON reader and
        // writer: what server and client both speak (neither imports the other).
        .target(name: "APIModel", dependencies: ["Logging"]),
        // Smaller JPEGs of panoramas, with libjpeg-turbo: knows images, not tours.
        .target(name: "ImagePreviews", dependencies: ["CTurboJPEG"]),
        // The tour viewer's pages as pure functions of the API's documents: HTML, SVG, the
        // viewer's script. Knows neither HTTP nor storage.
        .target(name: "TourViewer", dependencies: ["APIModel"]),

        // The server: the sync service and its thin executable.
        // One request to a server toursd does not trust (a webhook receiver), through libcurl.
        .target(name: "OutboundHTTP", dependencies: ["CCurl"]),
        // An S3-compatible bucket through libcurl (SigV4): objects and multipart uploads, on
        // transfer threads of its own. Knows buckets, not tours.
        .target(name: "ObjectStorage", dependencies: ["CCurl", "Hashing", "ThreadPools"]),
        .target(name: "TourService", dependencies: ["APIModel", "TourViewer", "ImagePreviews", "HTTPCore", "Logging", "Hashing", "SQLiteDB", "PostgresDB", "ThreadPools", "CLinux", "OutboundHTTP", "ObjectStorage"]),
        .executableTarget(name: "toursd", dependencies: ["TourService", "APIModel"]),

        // The client: library and thin command line.
        .target(name: "NoughtyTours", dependencies: ["APIModel", "CCurl", "SQLiteDB", "Hashing", "ThreadPools"]),
        .executableTarget(name: "tours", dependencies: ["NoughtyTours"]),
        // What make bench runs against the client library.
        .executableTarget(name: "ClientBench", dependencies: ["NoughtyTours"], path: "bench/ClientBench"),
        // Our JSON beside Foundation's, on the API's documents (make bench).
        .executableTarget(name: "DocumentBench", dependencies: ["APIModel"], path: "bench/DocumentBench"),
        // The durable reference make bench measures toursd's uploads against.
        .executableTarget(name: "DurableReceiver", dependencies: ["Hashing"], path: "bench/DurableReceiver"),

        // What the loopback tests and the test programs (Soak, SyncWorker) share: a raw HTTP
        // client, a command runner, servers to start. Imports no test framework.
        .target(name: "TestSupport", dependencies: ["CLinux"], path: "Tests/TestSupport"),
        // Swift Testing traits the test targets share: a test target itself, so no build but the
        // tests' ever compiles it (the toolchain has no static Testing module for release).
        .testTarget(name: "TestTraits", path: "Tests/TestTraits"),
        .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
        .testTarget(name: "APIModelTests", dependencies: ["APIModel"]),
        .testTarget(name: "TourViewerTests", dependencies: ["TourViewer", "APIModel"]),
        .testTarget(name: "ImagePreviewsTests", dependencies: ["ImagePreviews", "TestSupport"]),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore", "Logging", "ThreadPools", "TestSupport", "TestTraits"]),
        .testTarget(name: "HashingTests", dependencies: ["Hashing"]),
        .testTarget(name: "ObjectStorageTests", dependencies: ["ObjectStorage", "Hashing", "ThreadPools", "TestSupport"]),
        .testTarget(name: "ThreadPoolsTests", dependencies: ["ThreadPools", "TestSupport"]),
        .testTarget(name: "SQLiteDBTests", dependencies: ["SQLiteDB", "ThreadPools", "TestSupport"]),
        .testTarget(name: "PostgresDBTests", dependencies: ["PostgresDB", "TestSupport", "TestTraits"]),
        .testTarget(name: "TourServiceTests", dependencies: ["TourService", "HTTPCore", "Hashing", "ImagePreviews", "Logging", "PostgresDB", "ObjectStorage", "TestSupport", "TestTraits"]),
        .testTarget(name: "NoughtyToursTests", dependencies: ["NoughtyTours", "APIModel", "SQLiteDB", "TestSupport", "TestTraits"]),
        // One test per finding of the attack probe, black box, against the release toursd.
        .testTarget(name: "AttackTests", dependencies: ["TestSupport", "ImagePreviews", "TestTraits"]),
        // A client process the library's tests start and kill mid-drain.
        .executableTarget(name: "SyncWorker", dependencies: ["NoughtyTours", "Hashing", "TestSupport"], path: "Tests/SyncWorker"),
        // make soak: clients through a chaos proxy while toursd is killed; checks both sides after.
        .executableTarget(name: "Soak", dependencies: ["TestSupport", "SQLiteDB", "Hashing"], path: "Tests/Soak"),
    ],
    swiftLanguageModes: [.v6]
)
