import ThreadPools
import Foundation
import HTTPCore
import Logging
import SQLiteDB

/// What every route of the service shares: storage, files, limits, the log. Its database and
/// file calls are async: they run on the SQLite pool's and the I/O pool's threads, never on
/// an event loop or a thread of Swift's cooperative pool.
final class ServiceContext: Sendable {
    let pool: any SQLStorage
    let blobs: BlobStore
    let config: ToursdConfig
    let logger: Logger
    let crashPoints: CrashPoints
    /// With several daemons on one PostgreSQL: the locks they take turns by (nil on SQLite).
    let advisoryLocks: AdvisoryLocks?
    /// Panorama ids whose file and row are being changed: one request at a time per id.
    let panoramaTurns: PanoramaTurns
    let previews: PreviewCache
    /// Failed viewer sign-ins by client address, shared by every daemon on the database.
    let signIns: SignInLimiter
    let knownTokens: KnownTokens

    init(pool: any SQLStorage, blobs: BlobStore, config: ToursdConfig, logger: Logger, crashPoints: CrashPoints) {
        self.pool = pool
        self.blobs = blobs
        advisoryLocks = config.databaseUrl.isEmpty ? nil : AdvisoryLocks(url: config.databaseUrl)
        panoramaTurns = PanoramaTurns(shared: advisoryLocks, waitSeconds: Double(config.uploadTakeoverSeconds))
        previews = PreviewCache(dataDir: config.dataDir, io: blobs.io, config: config, logger: logger)
        signIns = SignInLimiter(pool: pool, allowed: config.signInFailuresAllowed, window: config.signInWindowSeconds)
        knownTokens = KnownTokens(capacity: config.tokenCacheEntries, threads: pool.handlerThreads)
        self.config = config
        self.logger = logger
        self.crashPoints = crashPoints
    }

    /// The tenant of the request's bearer token (docs/api.md "Tenants are isolated"), asked of the
    /// database.
    func authenticate(_ request: Request) async throws -> Int64 {
        let digest = try tokenDigest(request)
        // A database error goes on as it is: `ServiceErrors` maps it (503, 507, 500).
        guard let tenant = try await pool.read({ try TenantStore.token(digest: digest, $0) })?.tenant else {
            throw ServiceError(.unauthorized, "unknown or revoked token")
        }
        knownTokens.remember(digest, tenant: tenant)
        return tenant
    }

    /// A check of the request's token to make with its first read, when this daemon knows the
    /// token's tenant; nil when it does not.
    func deferredCheck(_ request: Request) throws -> TokenCheck? {
        let digest = try tokenDigest(request)
        return knownTokens.tenant(of: digest).map { TokenCheck(digest: digest, tenant: $0) }
    }

    /// Settles `check` if no read has yet; throws 401 if it failed.
    func settle(_ check: TokenCheck) async throws {
        if !check.isSettled {
            let query = check.query
            try check.settle(try await pool.read { try $0.query(query.sql, arguments: query.arguments) })
        }
        try check.verdict()
    }

    private func tokenDigest(_ request: Request) throws(ServiceError) -> [UInt8] {
        guard let header = request.headers["authorization"] else { throw ServiceError(.unauthorized, "a bearer token is required") }
        guard let token = BearerToken.parse(header) else {
            throw ServiceError(.unauthorized, "Authorization must be \"Bearer <token>\"")
        }
        return Secrets.hash(token)
    }

    /// Writes in a transaction of its own on the single writer, group-committed: durable
    /// when this returns. A request's pending token check is settled first.
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        if let check = TokenCheck.pending { try await settle(check) }
        return try await pool.write(body)
    }

    /// Reads; a request's pending token check goes ahead of the read's first statement.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        guard let check = TokenCheck.pending, !check.isSettled else {
            if let check = TokenCheck.pending { try check.verdict() }
            return try await pool.read(body)
        }
        let query = check.query
        let (rows, result) = try await pool.read { db in try db.withQueryAhead(query, body) }
        try check.settle(rows)
        return try result.get()
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
