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
    /// Panorama ids whose file and row are being changed: one request at a time per id.
    let panoramaTurns = AsyncKeyedLock<BlobKey>()
    let previews: PreviewCache
    /// Failed viewer sign-ins by client address.
    let signIns: SignInLimiter

    init(pool: any SQLStorage, blobs: BlobStore, config: ToursdConfig, logger: Logger, crashPoints: CrashPoints) {
        self.pool = pool
        self.blobs = blobs
        previews = PreviewCache(dataDir: config.dataDir, io: blobs.io, quality: config.previewQuality,
                                maxSourcePixels: config.maxPreviewSourcePixels, logger: logger)
        signIns = SignInLimiter(allowed: config.signInFailuresAllowed, window: config.signInWindowSeconds)
        self.config = config
        self.logger = logger
        self.crashPoints = crashPoints
    }

    /// The tenant of the request's bearer token (API.md "Tenants are isolated").
    func authenticate(_ request: Request) async throws -> Int64 {
        guard let header = request.headers["authorization"] else { throw ServiceError(.unauthorized, "a bearer token is required") }
        guard let token = BearerToken.parse(header) else {
            throw ServiceError(.unauthorized, "Authorization must be \"Bearer <token>\"")
        }
        // A database error goes on as it is: `ServiceErrors` maps it (503, 507, 500).
        let tenant = try await pool.read { try TenantStore.tenant(forToken: token, $0) }
        guard let tenant else { throw ServiceError(.unauthorized, "unknown or revoked token") }
        return tenant
    }

    /// Writes in a transaction of its own on the single writer, group-committed: durable
    /// when this returns.
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await pool.write(body)
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await pool.read(body)
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
