import NTServiceModel
import NTServiceStorage
import NTSQLKit
import NTThreadPools
import Synchronization

/// The tenant of each bearer token this daemon has let in, by the token's SHA-256. A token
/// never changes tenant, so remembering it only saves looking the tenant up: whether the token
/// is still unrevoked is asked of the database on every request (`Authentication`). One table per
/// handler thread, so that threads never wait for each other here; each bounded by
/// `tokenCacheEntries`, and when full it forgets them all.
package final class KnownTokens: Sendable {
    private final class Table: Sendable {
        let tenants = Mutex<[[UInt8]: Int64]>([:])
    }
    /// One per handler thread, and a last one for any other thread.
    private let tables: [Table]
    private let threads: ThreadPool
    private let capacity: Int

    package init(capacity: Int, threads: ThreadPool) {
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
