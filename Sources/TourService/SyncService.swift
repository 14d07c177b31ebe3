import HTTPCore
import Logging
import Synchronization

/// The sync service: its routes, assembled into the router the HTTP server serves.
public enum SyncService {
    /// The router of every route toursd serves.
    public static func makeRouter(config: ToursdConfig, metrics: ServerMetrics) -> Router {
        // /metrics labels requests by route, so it needs the router it belongs to.
        let routerBox = RouterReference()
        let router = Router { table in
            OpsRoutes.add(to: &table, metrics: metrics, routes: { routerBox.routes })
        }
        routerBox.set(router)
        return router
    }
}

/// Lets a route read the router it is part of, which exists only once all routes are added.
private final class RouterReference: Sendable {
    private let router = Mutex<Router?>(nil)
    func set(_ value: Router) { router.withLock { $0 = value } }
    var routes: [Route] { router.withLock { $0?.routes ?? [] } }
}
