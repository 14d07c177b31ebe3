import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage

/// The event feed (docs/api.md "Events"): a tenant's events in order after a cursor, waiting
/// for the first when asked to (long-poll).
package enum EventRoutes {
    package static func add(to api: inout APIRoutes, settings: APISettings, feed: EventFeed) {
        let maxWait = settings.maxEventWaitSeconds
        api.add(.get, "/v1/events", .tenant, parse: Addressed.nothing) { _, principal, request in
            let query = try FeedQuery.parse(after: request.queryParameter("after"), limit: request.queryParameter("limit"),
                                            wait: request.queryParameter("wait"), maxWait: maxWait)
            return .document(.ok, try await feed.page(principal.tenant, query))
        }
    }
}
