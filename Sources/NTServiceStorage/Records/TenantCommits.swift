import NTServiceModel
import NTSQLKit
import Synchronization

/// The feed's long-polls, by tenant: a commit wakes only the polls of the tenants it wrote
/// events for, so one tenant's writes cost nothing to another's waiting polls.
package final class TenantCommits: Sendable {
    private let waiters = Mutex<[Int64: Waiters]>([:])
    /// Waiting feed requests a commit woke, since start (`/metrics`).
    private let woken = Atomic<Int>(0)

    var metrics: String {
        """
        # HELP toursd_event_waits_woken_total Waiting feed requests woken by a commit of their tenant's events.
        # TYPE toursd_event_waits_woken_total counter
        toursd_event_waits_woken_total \(woken.load(ordering: .relaxed))

        """
    }

    /// The tenant's waits (one set per tenant that ever waited: bounded by the tenants).
    package func of(_ tenant: Int64) -> Waiters {
        waiters.withLock { waiters in
            if let found = waiters[tenant] { return found }
            let made = Waiters()
            waiters[tenant] = made
            return made
        }
    }

    /// Wakes the waits of these tenants.
    func committed(_ tenants: Set<Int64>) {
        for tenant in tenants {
            guard let found = waiters.withLock({ $0[tenant] }), !found.isEmpty else { continue }
            woken.add(found.signal(), ordering: .relaxed)
        }
    }
}

/// A write's connection that notes the tenants it appends events for (`EventStore`), for
/// `TenantCommits` at its commit; every statement goes to the connection it wraps.
final class EventNotingConnection: SQLConnection {
    private let inner: any SQLConnection
    private let noted = Mutex<Set<Int64>>([])
    /// The trace of the request the transaction is for (its `traceparent`), which its events
    /// keep for their webhook deliveries; nil when it is not traced.
    let traceparent: String?

    init(_ inner: any SQLConnection, traceparent: String?) {
        self.inner = inner
        self.traceparent = traceparent
    }

    var tenants: Set<Int64> { noted.withLock { $0 } }

    /// What `EventStore` calls when it appends an event of `tenant` on `db`: the trace the
    /// event keeps.
    static func note(_ db: any SQLConnection, _ tenant: Int64) -> String? {
        let noting = db as? EventNotingConnection
        noting?.noted.withLock { _ = $0.insert(tenant) }
        return noting?.traceparent
    }

    var dialect: SQLDialect { inner.dialect }
    func execute(_ sql: String) async throws { try await inner.execute(sql) }
    func run(_ sql: String, arguments: [any SQLBindable]) async throws -> Int { try await inner.run(sql, arguments: arguments) }
    func query(_ sql: String, arguments: [any SQLBindable]) async throws -> [Row] { try await inner.query(sql, arguments: arguments) }
    func queries(_ statements: [SQLStatement]) async throws -> [[Row]] { try await inner.queries(statements) }
}
