#if canImport(Glibc)
import Glibc
#endif

/// One route: a method and a path pattern (`/v1/floors/{floorId}/plan`), with the body size
/// limit that applies to it, its handler behind the middleware of its groups, and the label
/// its requests are counted under.
public final class Route: Sendable {
    enum Segment: Sendable, Equatable {
        case literal([UInt8])
        case parameter
    }

    public let method: HTTPMethod
    public let pattern: String
    public let bodyLimit: Int64
    /// Fields added to every answer of this route, its errors included.
    public let headers: [HTTPField]
    /// The handler never waits: its task runs on the connection's own event loop, saving two
    /// thread hops. It formats bytes, or reads only what memory holds and hands whatever could
    /// wait (a disk, a database across a network, a lock held across either) to other threads.
    public let inline: Bool
    /// The path carries a secret (a share link's): the access log writes the pattern instead.
    public let secretPath: Bool
    let responder: RequestResponder
    let segments: [Segment]
    let parameterNames: [String]
    /// Index in the router's table, used as the metrics label.
    let index: Int

    init(method: HTTPMethod, pattern: String, bodyLimit: Int64, headers: [HTTPField], inline: Bool, secretPath: Bool,
         responder: @escaping RequestResponder, index: Int) {
        self.secretPath = secretPath
        self.method = method
        self.pattern = pattern
        self.bodyLimit = bodyLimit
        self.headers = headers
        self.inline = inline
        self.responder = responder
        self.index = index
        var segments: [Segment] = []
        var names: [String] = []
        for part in pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            if part.hasPrefix("{") && part.hasSuffix("}") {
                segments.append(.parameter)
                names.append(String(part.dropFirst().dropLast()))
            } else {
                segments.append(.literal(Array(part.utf8)))
            }
        }
        precondition(pattern.hasPrefix("/"), "route pattern \(pattern) must start with /")
        precondition(Set(names).count == names.count, "route pattern \(pattern) repeats a parameter")
        self.segments = segments
        self.parameterNames = names
    }

    /// Whether the path's segments match the pattern. `parts` are the byte ranges of the
    /// segments after the leading `/` in `path`; compared as bytes, nothing allocated.
    func matches(_ path: UnsafeBufferPointer<UInt8>, _ parts: [Range<Int>]) -> Bool {
        guard parts.count == segments.count else { return false }
        for (part, segment) in zip(parts, segments) {
            switch segment {
            case .literal(let literal):
                guard part.count == literal.count else { return false }
                guard part.isEmpty || literal.withUnsafeBufferPointer({ memcmp($0.baseAddress!, path.baseAddress! + part.lowerBound, part.count) == 0 }) else {
                    return false
                }
            case .parameter:
                guard !part.isEmpty else { return false }
            }
        }
        return true
    }

    /// The values of the parameters in a path that `matches`.
    func parameters(_ path: UnsafeBufferPointer<UInt8>, _ parts: [Range<Int>]) -> [String] {
        zip(parts, segments).compactMap { part, segment in
            guard case .parameter = segment else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: path[part]), as: UTF8.self)
        }
    }
}

/// Finds the route for a method and path. Routes without parameters are found by a hash
/// lookup (no allocation on the hot path); the others by matching each pattern in turn.
/// A path that matches with another method answers 405 with `Allow` (RFC 9110 §15.5.6);
/// `HEAD` is served by the `GET` route when there is no `HEAD` route of its own.
public final class Router: Sendable {
    public let routes: [Route]
    private let staticRoutes: [String: [Route]]
    private let parameterRoutes: [Route]

    public enum Match {
        case found(Route, parameters: [String])
        case notFound
        case methodNotAllowed([HTTPMethod])
    }

    public init(_ build: (inout RouteTable) -> Void) {
        var table = RouteTable()
        build(&table)
        routes = table.routes
        staticRoutes = Dictionary(grouping: table.routes.filter { $0.parameterNames.isEmpty }, by: \.pattern)
        parameterRoutes = table.routes.filter { !$0.parameterNames.isEmpty }
    }

    public func match(_ method: HTTPMethod, _ path: String) -> Match {
        if let candidates = staticRoutes[path] {
            if let route = pick(method, candidates) { return .found(route, parameters: []) }
            return .methodNotAllowed(allowedMethods(candidates))
        }
        var path = path
        return path.withUTF8 { bytes in
            // Split once, as byte ranges: each pattern is then compared segment by segment.
            var parts: [Range<Int>] = []
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                parts.append(start..<index)
                start = index + 1
            }
            parts.removeFirst() // what precedes the leading "/"
            let candidates = parameterRoutes.filter { $0.matches(bytes, parts) }
            if candidates.isEmpty { return .notFound }
            if let route = pick(method, candidates) {
                return .found(route, parameters: route.parameters(bytes, parts))
            }
            return .methodNotAllowed(allowedMethods(candidates))
        }
    }

    private func pick(_ method: HTTPMethod, _ candidates: [Route]) -> Route? {
        if let route = candidates.first(where: { $0.method == method }) { return route }
        if method == .head { return candidates.first { $0.method == .get } }
        return nil
    }

    private func allowedMethods(_ candidates: [Route]) -> [HTTPMethod] {
        var allowed: [HTTPMethod] = []
        for route in candidates where !allowed.contains(route.method) {
            allowed.append(route.method)
            if route.method == .get && !candidates.contains(where: { $0.method == .head }) { allowed.append(.head) }
        }
        return allowed
    }
}

/// Collects routes while a router is built.
public struct RouteTable {
    fileprivate(set) var routes: [Route] = []
    /// The middleware of the groups being built, outermost first.
    private var middleware: [any Middleware] = []

    /// Adds a route behind the middleware of the groups around it. `bodyLimit` is the most its
    /// request body may carry (0: no body); `headers` go on every answer of the route;
    /// `inline`: the handler never waits and runs on the event loop (see `Route.inline`);
    /// `secretPath`: the path is a secret, never logged (see `Route.secretPath`).
    public mutating func add(_ method: HTTPMethod, _ pattern: String, bodyLimit: Int64 = 0, headers: [HTTPField] = [],
                             inline: Bool = false, secretPath: Bool = false, _ handler: @escaping RequestResponder) {
        precondition(!routes.contains { $0.method == method && $0.pattern == pattern }, "route \(method.name) \(pattern) added twice")
        routes.append(Route(method: method, pattern: pattern, bodyLimit: bodyLimit, headers: headers, inline: inline, secretPath: secretPath,
                            responder: middleware.wrapping(handler), index: routes.count))
    }

    /// Adds the routes `build` adds behind `middleware` (the first outermost), inside the
    /// middleware of the groups around this one.
    public mutating func group(_ middleware: any Middleware..., build: (inout RouteTable) -> Void) {
        group(middleware, build: build)
    }

    /// `group` with the middleware as a list (none: the routes as they are).
    public mutating func group(_ middleware: [any Middleware], build: (inout RouteTable) -> Void) {
        let outer = self.middleware
        self.middleware = outer + middleware
        build(&self)
        self.middleware = outer
    }
}
