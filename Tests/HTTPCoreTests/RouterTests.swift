import Testing
@testable import NTHTTPCore

@Suite struct RouterTests {
    private let router = Router { table in
        table.add(.get, "/healthz") { _ in Response(status: .ok) }
        table.add(.get, "/v1/properties/{propertyId}") { _ in Response(status: .ok) }
        table.add(.put, "/v1/properties/{propertyId}", bodyLimit: 100) { _ in Response(status: .ok) }
        table.add(.put, "/v1/properties/{propertyId}/floors/{floorId}") { _ in Response(status: .ok) }
        table.add(.options, "/v1/uploads") { _ in Response(status: .noContent) }
        table.add(.head, "/v1/uploads/{uploadId}") { _ in Response(status: .ok) }
        table.add(.get, "/v1/uploads/{uploadId}") { _ in Response(status: .ok) }
    }

    @Test func staticAndParameterRoutesMatch() {
        guard case .found(let route, let values) = router.match(.get, "/healthz") else { Issue.record("no match"); return }
        #expect(route.pattern == "/healthz")
        #expect(values.isEmpty)
        guard case .found(let floor, let ids) = router.match(.put, "/v1/properties/p1/floors/f2") else { Issue.record("no match"); return }
        #expect(floor.pattern == "/v1/properties/{propertyId}/floors/{floorId}")
        #expect(ids == ["p1", "f2"])
        #expect(floor.parameterNames == ["propertyId", "floorId"])
    }

    @Test func routesKeepTheirBodyLimit() {
        guard case .found(let route, _) = router.match(.put, "/v1/properties/x") else { Issue.record("no match"); return }
        #expect(route.bodyLimit == 100)
    }

    @Test(arguments: ["/nowhere", "/v1/properties", "/v1/properties/", "/v1/properties/x/y", "/healthz/", "//healthz"])
    func unknownPathsAreNotFound(path: String) {
        guard case .notFound = router.match(.get, path) else { Issue.record("\(path) matched"); return }
    }

    @Test func otherMethodsOnAKnownPathAre405WithEveryAllowedMethod() {
        guard case .methodNotAllowed(let allowed) = router.match(.delete, "/v1/properties/x") else { Issue.record("no 405"); return }
        #expect(allowed == [.get, .head, .put])
        guard case .methodNotAllowed(let healthz) = router.match(.post, "/healthz") else { Issue.record("no 405"); return }
        #expect(healthz == [.get, .head])
    }

    @Test func headUsesTheGetRouteUnlessItHasItsOwn() {
        guard case .found(let viaGet, _) = router.match(.head, "/v1/properties/x") else { Issue.record("no match"); return }
        #expect(viaGet.method == .get)
        guard case .found(let own, _) = router.match(.head, "/v1/uploads/u") else { Issue.record("no match"); return }
        #expect(own.method == .head)
        guard case .methodNotAllowed(let allowed) = router.match(.post, "/v1/uploads/u") else { Issue.record("no 405"); return }
        #expect(allowed == [.head, .get])
    }

    @Test func queryParametersArePercentDecoded() {
        #expect(percentDecode("a%20b+c") == "a b c")
        #expect(percentDecode("%zz") == nil)
        #expect(percentDecode("%e2%82%ac") == "€")
        #expect(percentDecode("%ff") == nil) // not UTF-8
    }
}

/// docs/api.md "Errors": `retryable` is true exactly for 408, 429, 500, 503 and 507.
@Suite struct HTTPErrorTests {
    @Test func retryableExactlyForTheStatusesAPIMDNames() {
        for code in 400...599 {
            let error = HTTPError(HTTPStatus(code, "x"), code: "x", "m")
            #expect(error.isRetryable == [408, 429, 500, 503, 507].contains(code), "status \(code)")
        }
    }

    @Test func theErrorBodyCarriesCodeMessageAndRetryable() throws {
        let response = Response.error(.unavailable("shutting down", retryAfterSeconds: 3))
        guard case .bytes(let body) = response.body else { Issue.record("no body"); return }
        #expect(String(decoding: body, as: UTF8.self) == #"{"error":{"code":"unavailable","message":"shutting down","retryable":true}}"#)
        #expect(response.headers == [HTTPField(name: "Retry-After", value: "3")])
        #expect(response.contentType == "application/json")
    }
}
