import Foundation
import Testing
import TestSupport
import TestTraits
import NTHTTPCore
import NTLogging
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTWebhooks

/// docs/openapi.yaml describes every route the router serves.
@Suite(.hangGuard, .testThreads) struct OpenAPITests {
    /// "METHOD /path" for each operation under `paths:` (two-space paths, four-space methods).
    private func documentedOperations() throws -> Set<String> {
        let path = ServiceHarness.root.appendingPathComponent("docs/openapi.yaml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var operations = Set<String>()
        var inPaths = false
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("paths:") { inPaths = true; continue }
            guard inPaths else { continue }
            if !line.hasPrefix(" ") && !line.isEmpty { break }
            if line.hasPrefix("  /") && line.hasSuffix(":") {
                current = String(line.dropFirst(2).dropLast())
            } else if let current, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
                if ["GET", "PUT", "POST", "PATCH", "DELETE", "HEAD", "OPTIONS"].contains(method) { operations.insert("\(method) \(current)") }
            }
        }
        return operations
    }

    @Test func everyErrorCodeIsInTheErrorSchema() throws {
        let path = ServiceHarness.root.appendingPathComponent("docs/openapi.yaml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let start = try #require(text.range(of: "enum: [bad_request"))
        let end = try #require(text[start.upperBound...].firstIndex(of: "]"))
        let documented = Set(text[start.lowerBound..<end].dropFirst("enum: [".count).split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        // The service's codes, and those the HTTP layer answers with on its own.
        let codes = Set(ServiceError.Code.allCases.map(\.rawValue)).union([
            "method_not_allowed", "request_timeout", "header_too_large", "unavailable", "expectation_failed",
            "not_implemented", "version_not_supported"])
        #expect(codes.subtracting(documented).isEmpty, "not in the Error schema: \(codes.subtracting(documented).sorted())")
    }

    @Test func everyRouteOfTheRouterIsDocumented() async throws {
        let harness = try await ServiceHarness()
        let router = harness.service.makeRouter(metrics: ServerMetrics())
        let routes = Set(router.routes.map { "\($0.method.name) \($0.pattern)" })
        let documented = try documentedOperations()
        #expect(routes.subtracting(documented).isEmpty, "not in docs/openapi.yaml: \(routes.subtracting(documented).sorted())")
        #expect(documented.subtracting(routes).isEmpty, "documented but not served: \(documented.subtracting(routes).sorted())")
        await harness.finish()
    }
}
