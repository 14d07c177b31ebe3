import SQLKit
import ThreadPools
import Synchronization

/// The tenant of each bearer token this daemon has let in, by the token's SHA-256. A token
/// never changes tenant, so remembering it only saves looking the tenant up: whether the token
/// is still unrevoked is asked of the database on every request (`TokenCheck`). One table per
/// handler thread, so that threads never wait for each other here; each bounded by
/// `tokenCacheEntries`, and when full it forgets them all.
final class KnownTokens: Sendable {
    private final class Table: Sendable {
        let tenants = Mutex<[[UInt8]: Int64]>([:])
    }
    /// One per handler thread, and a last one for any other thread.
    private let tables: [Table]
    private let threads: ThreadPool
    private let capacity: Int

    init(capacity: Int, threads: ThreadPool) {
        tables = (0...threads.threadCount).map { _ in Table() }
        self.threads = threads
        self.capacity = capacity
    }

    func tenant(of digest: [UInt8]) -> Int64? {
        table.tenants.withLock { $0[digest] }
    }

    func remember(_ digest: [UInt8], tenant: Int64) {
        table.tenants.withLock { tenants in
            if tenants.count >= capacity { tenants.removeAll(keepingCapacity: true) }
            tenants[digest] = tenant
        }
    }

    private var table: Table { tables[threads.indexOfCurrentThread ?? tables.count - 1] }
}

/// A known token's check for one GET or HEAD, made with the request's first read: its query
/// goes ahead of the read's first statement, in the same round trip on PostgreSQL. Until it
/// has passed, nothing the request did leaves the daemon: `Authentication` settles it before
/// the answer goes out, and a write settles it first.
final class TokenCheck: Sendable {
    /// The check of the request this task serves, until it is settled.
    @TaskLocal static var pending: TokenCheck?

    let digest: [UInt8]
    /// The tenant the token belonged to when this daemon last let it in.
    let tenant: Int64
    /// nil until the database has answered; then whether the token is still good.
    private let passed = Mutex<Bool?>(nil)

    init(digest: [UInt8], tenant: Int64) {
        self.digest = digest
        self.tenant = tenant
    }

    var query: SQLStatement { TenantStore.tokenQuery(digest) }
    var isSettled: Bool { passed.withLock { $0 != nil } }

    /// Records the answer to `query`; throws 401 when the token is revoked or gone.
    func settle(_ rows: [Row]) throws(ServiceError) {
        let good = TenantStore.validToken(in: rows, digest: digest)?.tenant == tenant
        passed.withLock { $0 = good }
        try verdict()
    }

    /// Throws 401 if the check has failed.
    func verdict() throws(ServiceError) {
        if passed.withLock({ $0 }) == false { throw ServiceError(.unauthorized, "unknown or revoked token") }
    }
}
