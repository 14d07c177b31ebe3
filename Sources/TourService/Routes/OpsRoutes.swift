import HTTPCore

/// `GET /healthz` and `GET /metrics` (API.md "Service"): no token needed.
enum OpsRoutes {
    /// The health answer never changes, so it is encoded once.
    private static let healthBody: [UInt8] = Array(#"{"status":"ok"}"#.utf8)

    static func add(to table: inout RouteTable, metrics: ServerMetrics, routes: @escaping @Sendable () -> [Route]) {
        table.add(.get, "/healthz") { _, _ in
            .response(.json(.ok, healthBody))
        }
        table.add(.get, "/metrics") { _, _ in
            .response(Response(status: .ok, contentType: "text/plain; version=0.0.4; charset=utf-8",
                               body: .bytes(Array(metrics.render(routes: routes()).utf8))))
        }
    }
}
