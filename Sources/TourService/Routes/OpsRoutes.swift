import HTTPCore

/// `GET /healthz` and `GET /metrics` (API.md "Service"): no token needed. Both only format
/// bytes, so they run inline on their connection's event loop.
enum OpsRoutes {
    /// The health answer never changes, so it is encoded once.
    private static let healthBody: [UInt8] = Array(#"{"status":"ok"}"#.utf8)

    static func add(to table: inout RouteTable, metrics: ServerMetrics, routes: @escaping @Sendable () -> [Route]) {
        table.add(.get, "/healthz", inline: true) { _ in
            .json(.ok, healthBody)
        }
        table.add(.get, "/metrics", inline: true) { _ in
            Response(status: .ok, contentType: "text/plain; version=0.0.4; charset=utf-8",
                     body: .bytes(Array(metrics.render(routes: routes()).utf8)))
        }
    }
}
