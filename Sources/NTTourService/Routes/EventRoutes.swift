import Foundation
import NTHTTPCore

/// The event feed (docs/api.md "Events"): a tenant's events in order after a cursor, waiting
/// for the first when asked to (long-poll).
enum EventRoutes {
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext) {
        table.add(.get, "/v1/events", .tenant(nil)) { request in
            let tenant = request.tenant
            let query = try FeedQuery.parse(after: request.queryParameter("after"), limit: request.queryParameter("limit"),
                                            wait: request.queryParameter("wait"), maxWait: context.config.maxEventWaitSeconds)
            let read = { try await context.readOne { try await EventStore.page($0, tenant, after: query.after, limit: query.limit) } }
            // Long-poll: this daemon's commits of the tenant's events wake it (a commit during a
            // read too: the mark is taken before it); other daemons' are looked for every
            // eventPollMs. Bounded by the deadline.
            let commits = context.commits.of(tenant)
            var mark = commits.mark()
            var items = try await read()
            let deadline = ContinuousClock.now + .seconds(query.wait)
            while items.isEmpty, ContinuousClock.now < deadline {
                let left = deadline - ContinuousClock.now
                let milliseconds = Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
                await commits.awaitSignal(since: mark, upTo: min(context.config.eventPollMs, max(1, milliseconds)))
                mark = commits.mark()
                items = try await read()
            }
            return .document(.ok, EventPage(items: items, next: items.last?.id ?? query.after))
        }
    }
}

/// What a feed request asks: the cursor (the last event id seen, 0 for the start), at most
/// how many events (1 to 200, 50 by default), and how long to wait for the first (seconds,
/// 0 to `maxEventWaitSeconds`). Pure.
struct FeedQuery: Equatable {
    var after: Int64
    var limit: Int
    var wait: Int

    static func parse(after: String?, limit: String?, wait: String?, maxWait: Int) throws(ServiceError) -> FeedQuery {
        func number(_ text: String?, _ name: String, _ range: ClosedRange<Int64>, default value: Int64) throws(ServiceError) -> Int64 {
            guard let text else { return value }
            guard !text.isEmpty, text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int64(text), range.contains(number) else {
                throw .badRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        return FeedQuery(after: try number(after, "after", 0...Int64.max, default: 0), limit: Int(try number(limit, "limit", 1...200, default: 50)),
                         wait: Int(try number(wait, "wait", 0...Int64(maxWait), default: 0)))
    }
}

extension ServiceContext {
    /// Removes the events older than `eventRetentionDays`.
    func sweepOldEvents() async {
        let cutoff = clock.timestamp(plus: -config.eventRetentionDays * 86_400)
        do {
            let removed = try await write { try await EventStore.deleteCreated($0, before: cutoff) }
            if removed > 0 { logger.info("old events removed", ["count": String(removed)]) }
        } catch {
            failed("the event retention sweep failed", error)
        }
    }
}

extension ServiceContext {
    /// Writes `tour.changed` for each property whose changes have settled
    /// (`tourChangedQuietSeconds` without another), once across daemons.
    func writeSettledTourChanges() async {
        let cutoff = clock.unixSeconds - Int64(config.tourChangedQuietSeconds)
        do {
            let settled = try await readOne { try await EventStore.settledTourChanges($0, changedBy: cutoff, limit: 100) }
            for change in settled {
                _ = try await write { try await EventStore.writeTourChanged($0, change.tenant, property: change.property, changedBy: cutoff, at: self.clock.now()) }
            }
        } catch {
            failed("writing settled tour changes failed", error)
        }
    }
}
