import Foundation
import NTAPIModel
import NTServiceModel
import NTServiceStorage

/// The event feed (docs/api.md "Events"): a tenant's events in order after a cursor, waiting
/// for the first when asked to (long-poll). Knows no HTTP.
package struct EventFeed: Sendable {
    package let records: Records
    /// How often a long-poll looks for other daemons' commits (`eventPollMs`).
    package let pollMs: Int

    package init(records: Records, pollMs: Int) {
        self.records = records
        self.pollMs = pollMs
    }

    func page(_ tenant: Int64, _ query: FeedQuery) async throws -> EventPage {
        let read = { try await records.readOne { try await EventStore.page($0, tenant, after: query.after, limit: query.limit) } }
        // This daemon's commits of the tenant's events wake it (a commit during a read too: the
        // mark is taken before it); other daemons' are looked for every pollMs. Bounded by the
        // deadline.
        let commits = records.commits.of(tenant)
        var mark = commits.mark()
        var items = try await read()
        let deadline = ContinuousClock.now + .seconds(query.wait)
        while items.isEmpty, ContinuousClock.now < deadline {
            let left = deadline - ContinuousClock.now
            let milliseconds = Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            await commits.awaitSignal(since: mark, upTo: min(pollMs, max(1, milliseconds)))
            mark = commits.mark()
            items = try await read()
        }
        return EventPage(items: items, next: items.last?.id ?? query.after)
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
