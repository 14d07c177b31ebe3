import NTThreadPools
import Foundation
import NTHTTPCore
import NTCoordination
import NTLogging
import NTMetrics
import NTTracing
import NTSQLiteDB

/// What every route of the service shares: storage, files, limits, the log. Its database and
/// file calls are async: they run on the SQLite pool's and the I/O pool's threads, never on
/// an event loop or a thread of Swift's cooperative pool.
final class ServiceContext: Sendable {
    let pool: any SQLStorage
    let blobs: any BlobStore
    let config: ToursdConfig
    let logger: Logger
    /// The time of day every row's timestamp, expiry and retry reads.
    let clock: any ServiceClock
    let crashPoints: CrashPoints
    /// Who may act on a thing now, in this daemon and across the deployment's daemons.
    let locker: any Locker
    let previews: PreviewCache
    /// Cube tiles of large panoramas, made on the previews' image pool.
    let tiles: PanoramaTiles
    /// Stored panoramas having their previews and tiles made (`ProcessPanorama`).
    let processing: ProcessingQueue
    /// Failed viewer sign-ins by client address, shared by every daemon on the database.
    let signIns: SignInLimiter
    let knownTokens: KnownTokens
    /// Storage outages as logged: as they start, while they last and as they end, never per
    /// request or job that met them (`failed`).
    let outages: OutageLog
    /// The feed's long-polls, woken when this daemon commits a write with events of their
    /// tenant (events are written in the transaction of their change).
    let commits = TenantCommits()
    /// Reads, writes and one-statement reads, by outcome and latency (/metrics).
    let databaseCalls = OperationMetrics(name: "toursd_database_calls", what: "calls to the database (a transaction, or a read of one statement)")
    /// The database's deployment id (`DeploymentStore`): the blob store it may sweep holds it.
    let deploymentId: String

    /// `sharedPreviews`: the bucket, when previews are shared through it.
    /// `imageThreads`: where previews and tiles are decoded.
    init(pool: any SQLStorage, blobs: any BlobStore, imageThreads: ThreadPool, deploymentId: String, locker: any Locker, sharedPreviews: BucketBlobStore?,
         config: ToursdConfig, logger: Logger, clock: any ServiceClock, crashPoints: CrashPoints) {
        self.pool = pool
        self.blobs = blobs
        self.deploymentId = deploymentId
        self.locker = locker
        previews = PreviewCache(dataDir: config.dataDir, io: blobs.io, decoders: imageThreads, config: config, logger: logger, shared: sharedPreviews)
        tiles = PanoramaTiles(dataDir: config.dataDir, io: blobs.io, images: previews.decoders, memory: previews.memory, config: config, logger: logger)
        processing = ProcessingQueue(limit: config.processingQueueLimit)
        signIns = SignInLimiter(pool: pool, allowed: config.signInFailuresAllowed, window: config.signInWindowSeconds, clock: clock)
        knownTokens = KnownTokens(capacity: config.tokenCacheEntries, threads: pool.handlerThreads)
        self.config = config
        self.logger = logger
        self.clock = clock
        outages = OutageLog(intervalSeconds: config.outageLogSeconds, logger: logger, components: [
            OutageLog.Component(name: "the database") { [pool] in pool.unavailableReason },
            OutageLog.Component(name: "the blob store") { [blobs] in blobs.unavailableReason },
        ])
        self.crashPoints = crashPoints
    }

    /// The tenant of the request's tenant token (docs/api.md "Tenants are isolated"), asked of
    /// the database.
    func authenticate(_ request: Request) async throws -> Int64 {
        let digest = Secrets.hash(try bearerToken(request))
        // A database error goes on as it is: `ServiceErrors` maps it (503, 507, 500).
        guard let tenant = try await tenantOf(digest) else { throw ServiceError(.unauthorized, "unknown or revoked token") }
        knownTokens.remember(digest, tenant: tenant)
        return tenant
    }

    /// The tenant this daemon last let the request's token in for; nil when it does not know
    /// the token.
    func knownTenant(_ request: Request) throws -> (digest: [UInt8], tenant: Int64)? {
        let digest = Secrets.hash(try bearerToken(request))
        return knownTokens.tenant(of: digest).map { (digest, $0) }
    }

    /// The token's check, asked now (beside the route's first read, on PostgreSQL in its
    /// batch) and awaited with `stillValid` before the answer leaves.
    func tokenCheck(_ digest: [UInt8]) -> SQLPendingRows {
        pool.prefetch(TenantStore.tokenQuery(digest))
    }

    /// Whether the token is still good for `tenant` (not revoked since), as `check` found.
    func stillValid(_ check: SQLPendingRows, _ digest: [UInt8], tenant: Int64) async throws -> Bool {
        try TenantStore.validToken(in: try await check.rows(), digest: digest)?.tenant == tenant
    }

    private func tenantOf(_ digest: [UInt8]) async throws -> Int64? {
        try TenantStore.validToken(in: try await pool.statement(TenantStore.tokenQuery(digest)), digest: digest)?.tenant
    }

    /// The grant a grant token is, asked of the database on every request (a revocation holds
    /// at once on every daemon). An expired grant is told apart from a revoked one: a client
    /// asks its host for a fresh grant after the one, never after the other.
    func grant(_ token: String) async throws -> GrantAccess {
        let digest = Secrets.hash(token)
        let rows = try await database("statement") { try await pool.statement(GrantStore.lookupQuery(digest)) }
        switch try GrantStore.lookup(in: rows, digest: digest, at: clock.now()) {
        case .valid(let grant): return grant
        case .expired: throw ServiceError(.grantExpired, "the grant expired: ask the host for a fresh one")
        case .revoked: throw ServiceError(.unauthorized, "the grant was revoked")
        case nil: throw ServiceError(.unauthorized, "unknown or revoked token")
        }
    }

    /// A background job's failure (`message`): logged, unless it is storage that cannot be
    /// reached, which the outage's own lines tell (`OutageLog`), not each round.
    func failed(_ message: String, _ error: any Error) {
        if let failure = error as? any StorageFailure, failure.storageError.kind == .unavailable {
            outages.met(failure.storageError)
            return
        }
        logger.warn(message, ["error": "\(error)"])
    }

    /// The request's bearer token.
    func bearerToken(_ request: Request) throws(ServiceError) -> String {
        guard let header = request.headers["authorization"] else { throw ServiceError(.unauthorized, "a bearer token is required") }
        guard let token = BearerToken.parse(header) else {
            throw ServiceError(.unauthorized, "Authorization must be \"Bearer <token>\"")
        }
        return token
    }

    /// Writes in a transaction of its own, durable when this returns.
    func write<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        // Read here, in the request's task: the body may run on the database's own thread.
        let traceparent = Trace.current?.context.traceparent
        let (value, tenants) = try await database("write") {
            try await pool.write { db in
                let noting = EventNotingConnection(db, traceparent: traceparent)
                return (try await body(noting), noting.tenants)
            }
        }
        commits.committed(tenants)
        return value
    }

    /// The database's lines of /metrics: its calls by kind, and where it is across a network
    /// its round trips and the connections transactions borrow.
    var databaseMetrics: String {
        var lines = databaseCalls.render()
        if let trips = pool.roundTrips {
            lines += """
                # HELP toursd_database_round_trips_total Batches of statements sent to PostgreSQL (one send, one wait each).
                # TYPE toursd_database_round_trips_total counter
                toursd_database_round_trips_total \(trips)

                """
        }
        if let connections = pool.transactionConnections {
            lines += """
                # HELP toursd_database_transaction_connections Connections transactions borrow (databasePoolSize), by state.
                # TYPE toursd_database_transaction_connections gauge
                toursd_database_transaction_connections{state="lent"} \(connections.lent)
                toursd_database_transaction_connections{state="free"} \(connections.size - connections.lent)
                # HELP toursd_database_transactions_waiting Transactions waiting for a connection.
                # TYPE toursd_database_transactions_waiting gauge
                toursd_database_transactions_waiting \(connections.waiting)

                """
        }
        return lines
    }

    /// A read of one statement (one snapshot, no transaction around it).
    func readOne<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await database("statement") { try await pool.readOne(body) }
    }

    /// Reads one committed state.
    func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await database("read") { try await pool.read(body) }
    }

    /// A call to the database, counted (/metrics: "error" when the database failed, "refused"
    /// when the service refused what it read, a 404 or a conflict) and, in a traced request,
    /// its span.
    private func database<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        try await Trace.span("database \(operation)", kind: .client) {
            try await databaseCalls.measure(operation, failure: { $0 is any StorageFailure ? "error" : "refused" }, body)
        }
    }
}

/// `Authorization: Bearer <token>` (RFC 6750 §2.1); the scheme is case-insensitive (RFC 9110
/// §11.1). Read as bytes: it is on every request's way.
enum BearerToken {
    static func parse(_ header: String) -> String? {
        let bytes = Array(header.utf8)
        guard bytes.count > 7, bytes[6] == UInt8(ascii: " "),
              zip(bytes[0..<6], "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        let token = bytes[7...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let end = token.lastIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        guard let end else { return nil }
        return String(decoding: token[..<(end + 1)], as: UTF8.self)
    }
}
