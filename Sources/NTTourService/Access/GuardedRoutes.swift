import NTHTTPCore

/// The `/v1` routes as they are added: each with its `Access` rule, so that a route cannot be
/// added without one (it would not compile), and each behind the `Authorization` of its rule.
/// `rules` is the list docs/security.md's table and `AccessMatrixTests` are checked against.
struct GuardedRoutes {
    private(set) var table: RouteTable
    private(set) var rules: [RouteRule]
    let context: ServiceContext

    init(_ table: RouteTable, context: ServiceContext, rules: [RouteRule] = []) {
        self.table = table
        self.context = context
        self.rules = rules
    }

    /// `secretPath`: the path carries a credential (an upload's capability), never logged.
    mutating func add(_ method: HTTPMethod, _ pattern: String, _ access: Access, bodyLimit: Int64 = 0, headers: [HTTPField] = [],
                      secretPath: Bool = false, _ handler: @escaping RequestResponder) {
        rules.append(RouteRule(method: method.name, pattern: pattern, access: access))
        table.group(Authorization(access: access, context: context)) { table in
            table.add(method, pattern, bodyLimit: bodyLimit, headers: headers, secretPath: secretPath, handler)
        }
    }

    /// A panorama's creation: the request parsed once (`parse`) into the command access is
    /// decided on (a grant's: `Authorization.check`), and `handler` executes that same value.
    /// `answering` runs around the three (a protocol's own way of answering refusals).
    mutating func addCreation(_ method: HTTPMethod, _ pattern: String, bodyLimit: Int64, headers: [HTTPField] = [],
                              answering: @escaping @Sendable (Request, () async throws -> Response) async throws -> Response,
                              parse: @escaping @Sendable (Request) throws -> PanoramaCreation,
                              _ handler: @escaping @Sendable (PanoramaCreation, Request) async throws -> Response) {
        let authorization = Authorization(access: .panoramaCreation, context: context)
        add(method, pattern, .panoramaCreation, bodyLimit: bodyLimit, headers: headers) { request in
            try await answering(request) {
                let creation = try parse(request)
                if let grant = request.grant { try await authorization.check(creation, grant) }
                return try await handler(creation, request)
            }
        }
    }

    /// The routes `build` adds behind `middleware` (the first outermost).
    mutating func group(_ middleware: any Middleware..., build: (inout GuardedRoutes) -> Void) {
        var rules = self.rules
        let context = self.context
        table.group(middleware) { table in
            var inner = GuardedRoutes(table, context: context, rules: rules)
            build(&inner)
            table = inner.table
            rules = inner.rules
        }
        self.rules = rules
    }
}
