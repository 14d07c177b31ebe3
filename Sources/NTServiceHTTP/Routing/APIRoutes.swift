import NTHTTPCore
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// The `/v1` routes, in the group of API credentials (`APIPrincipal`): each added with its
/// `Access` rule (a route cannot be added without one) and the parse of its request into its
/// `Command`; the rule is decided on the command, and the handler executes that same command.
/// `rules` is the list docs/security.md's table and `AccessMatrixTests` are checked against.
package struct APIRoutes {
    private(set) var group: RouteGroup<APIPrincipal>
    package private(set) var rules: [RouteRule] = []
    private let authorization: GrantAuthorization
    /// The database answers reads on an event loop without waiting (`SQLStorage.readsOnEventLoops`).
    private let readsOnEventLoops: Bool

    package init(_ group: RouteGroup<APIPrincipal>, authorization: GrantAuthorization, readsOnEventLoops: Bool) {
        self.group = group
        self.authorization = authorization
        self.readsOnEventLoops = readsOnEventLoops
    }

    package var table: RouteTable { group.table }

    /// `answering`: runs around the parse, the decision and the handler (a protocol's own way
    /// of answering refusals: the resumable-upload draft's). `readsOneRecord`: the handler
    /// reads one record and answers it as JSON, nothing else (no file, no list, no document
    /// of unbounded size): where the database reads on event loops, it runs on the loop.
    package mutating func add<C: Command>(_ method: HTTPMethod, _ pattern: String, _ access: Access, bodyLimit: Int64 = 0, headers: [HTTPField] = [],
                                  readsOneRecord: Bool = false,
                                  answering: (@Sendable (Request, () async throws -> Response) async throws -> Response)? = nil,
                                  parse: @escaping @Sendable (Request) throws -> C,
                                  _ handler: @escaping @Sendable (C, APIPrincipal, Request) async throws -> Response) {
        rules.append(RouteRule(method: method.name, pattern: pattern, access: access))
        let authorization = self.authorization
        group.add(method, pattern, bodyLimit: bodyLimit, headers: headers, inline: readsOneRecord && readsOnEventLoops) { principal, request in
            let decided = {
                let command = try parse(request)
                if let grant = principal.grant { try await authorization.authorize(access, command, grant) }
                return try await handler(command, principal, request)
            }
            guard let answering else { return try await decided() }
            return try await answering(request, decided)
        }
    }

    /// The routes `build` adds behind `middleware` (the first outermost).
    package mutating func group(_ middleware: any Middleware..., build: (inout APIRoutes) -> Void) {
        var rules = self.rules
        let (authorization, readsOnEventLoops) = (self.authorization, self.readsOnEventLoops)
        group.group(middleware) { group in
            var inner = APIRoutes(group, authorization: authorization, readsOnEventLoops: readsOnEventLoops)
            inner.rules = rules
            build(&inner)
            group = inner.group
            rules = inner.rules
        }
        self.rules = rules
    }
}
