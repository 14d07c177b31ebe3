import ThreadPools
import Foundation
import HTTPCore
import Logging
import SQLiteDB

/// What every route of the service shares: storage, files, limits, the log. Its database and
/// file calls are async: they run on the SQLite pool's and the I/O pool's threads, never on
/// an event loop or a thread of Swift's cooperative pool.
final class ServiceContext: Sendable {
    let pool: DatabasePool
    let blobs: BlobStore
    let config: ToursdConfig
    let logger: Logger

    init(pool: DatabasePool, blobs: BlobStore, config: ToursdConfig, logger: Logger) {
        self.pool = pool
        self.blobs = blobs
        self.config = config
        self.logger = logger
    }

    /// The tenant of the request's bearer token (API.md "Tenants are isolated").
    func authenticate(_ request: Request) async throws -> Int64 {
        guard let header = request.headers["authorization"] else { throw ServiceError(.unauthorized, "a bearer token is required") }
        let parts = header.split(separator: " ", maxSplits: 1)
        // The scheme is case-insensitive (RFC 9110 §11.1).
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw ServiceError(.unauthorized, "Authorization must be \"Bearer <token>\"")
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        let tenant: Int64?
        do {
            tenant = try await pool.read { try TenantStore.tenant(forToken: token, $0) }
        } catch {
            throw ServiceError(.internal, "token lookup failed: \(error)")
        }
        guard let tenant else { throw ServiceError(.unauthorized, "unknown or revoked token") }
        return tenant
    }

    /// Writes in a transaction of its own on the single writer, group-committed: durable
    /// when this returns.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await pool.write(body)
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await pool.read(body)
    }
}
