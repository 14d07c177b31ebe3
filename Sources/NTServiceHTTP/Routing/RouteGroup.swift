import NTHTTPCore
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// How a group's requests are authenticated: `body` answers with the principal the request
/// speaks for, or the authentication answers itself (401, a redirect to sign in, 404) before
/// anything else is read. It may look at the answer on its way back (a token revoked
/// meanwhile).
package typealias Authenticate<Principal> = @Sendable (Request, @Sendable (Principal) async throws -> Response) async throws -> Response

/// Routes that one kind of principal speaks for (an API credential, an upload's capability, a
/// share link, a signed-in session): each handler receives the principal as a value, and a
/// handler written for one kind cannot be added to a group that yields another (it does not
/// compile). Hummingbird's child request contexts are the model.
package struct RouteGroup<Principal: Sendable> {
    package private(set) var table: RouteTable
    private let authenticate: Authenticate<Principal>

    package init(_ table: RouteTable, authenticate: @escaping Authenticate<Principal>) {
        self.table = table
        self.authenticate = authenticate
    }

    /// `secretPath`: the path carries a credential (a share link's, an upload's capability),
    /// never logged. `inline`: the route runs on the event loop (`Route.inline`).
    package mutating func add(_ method: HTTPMethod, _ pattern: String, bodyLimit: Int64 = 0, headers: [HTTPField] = [], inline: Bool = false,
                      secretPath: Bool = false, _ handler: @escaping @Sendable (Principal, Request) async throws -> Response) {
        let authenticate = self.authenticate
        table.add(method, pattern, bodyLimit: bodyLimit, headers: headers, inline: inline, secretPath: secretPath) { request in
            try await authenticate(request) { principal in try await handler(principal, request) }
        }
    }

    /// The routes `build` adds behind `middleware` (the first outermost), still behind this
    /// group's authentication.
    package mutating func group(_ middleware: any Middleware..., build: (inout RouteGroup<Principal>) -> Void) {
        group(middleware, build: build)
    }

    /// `group` with the middleware as a list.
    package mutating func group(_ middleware: [any Middleware], build: (inout RouteGroup<Principal>) -> Void) {
        let authenticate = self.authenticate
        var table = self.table
        table.group(middleware) { table in
            var inner = RouteGroup(table, authenticate: authenticate)
            build(&inner)
            table = inner.table
        }
        self.table = table
    }
}
