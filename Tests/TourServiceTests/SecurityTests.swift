import Foundation
import Testing
import NTHTTPCore
import NTLogging
import TestSupport
import TestTraits
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// docs/security.md: what the server promises beyond tenant isolation (TenantIsolationTests),
/// each checked over every route of the router, so that a new route is covered at once.
@Suite(.hangGuard, .testThreads) struct SecurityTests {
    /// Path parameter values that must never name a file, a row or anything but "bad request".
    private static let hostile = ["..", "..%2F..%2Fetc%2Fpasswd", "%2e%2e", "a%00b", String(repeating: "a", count: 300),
                                  "3F2C9A70-0F5B-4C1E-9D8E-6B1A2C3D4E5F", "'%3B%20DROP%20TABLE%20properties%3B--", "%E2%80%AE"]

    private static func files(under directory: String) -> Set<String> {
        Set((FileManager.default.enumerator(atPath: directory)?.allObjects as? [String]) ?? [])
    }

    @Test func pathParametersThatAreNotLowercaseUUIDsAreRefusedOnEveryRoute() async throws {
        let harness = try await ServiceHarness(alone: true) // nginx refuses some of these paths itself
        let alpha = try harness.client(harness.alpha)
        let router = harness.service.makeRouter(metrics: ServerMetrics())
        // The viewer's pages are signed in with a session instead of a token.
        let browser = try ViewerBrowser(harness)
        _ = try browser.signIn(harness.alpha)
        let before = Self.files(under: harness.dataDir).filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        var checked = 0
        for route in router.routes where route.pattern.contains("{") {
            if !route.pattern.hasPrefix("/v1/") {
                for value in Self.hostile {
                    let path = route.pattern.replacingOccurrences(of: #"\{[a-zA-Z]+\}"#, with: value, options: .regularExpression)
                    let response = try browser.send(route.method.name, path, form: route.method == .post ? ["csrf": "x"] : nil)
                    #expect([400, 404].contains(response.status), "\(route.method.name) \(path): \(response.status)")
                    checked += 1
                }
                continue
            }
            for value in Self.hostile {
                let path = route.pattern.replacingOccurrences(of: #"\{[a-zA-Z]+\}"#, with: value, options: .regularExpression)
                let body: [UInt8] = route.bodyLimit > 0 ? Array(#"{"name":"x","floorCount":1,"number":0}"#.utf8) : []
                // The media type each route takes, so that the id is what it refuses.
                let type = route.pattern.hasPrefix("/v1/panoramas/") ? "image/jpeg"
                    : route.pattern.hasSuffix("/worldmap") ? "application/octet-stream"
                    : route.pattern.hasPrefix("/v1/uploads/") ? "application/offset+octet-stream" : "application/json"
                let response = try alpha.send(route.method.name, path + "?floorId=\(value)", body: body,
                                              headers: ["Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": type])
                #expect([400, 404].contains(response.status), "\(route.method.name) \(path): \(response.status) \(response.text)")
                checked += 1
            }
        }
        #expect(checked >= 10 * Self.hostile.count)
        // Nothing was written anywhere in the data directory (nor, by name, outside it).
        let after = Self.files(under: harness.dataDir).filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        #expect(after == before)
        #expect(!FileManager.default.fileExists(atPath: harness.dataDir + "/../etc"))
        await harness.finish()
    }

    @Test func everyRouteRefusesABodyOverItsLimitBeforeReadingIt() async throws {
        let harness = try await ServiceHarness(alone: true) // nginx answers 100 Continue itself
        let router = harness.service.makeRouter(metrics: ServerMetrics())
        let id = newID()
        for route in router.routes {
            let path = route.pattern.replacingOccurrences(of: #"\{[a-zA-Z]+\}"#, with: id, options: .regularExpression)
            // The head only, promising one byte more than the route takes, and waiting for
            // the go-ahead: the refusal must come without it.
            let client = try RawClient(port: harness.port)
            try client.send("\(route.method.name) \(path) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(harness.alpha)\r\n"
                            + "Tus-Resumable: 1.0.0\r\nContent-Type: application/json\r\nContent-Length: \(route.bodyLimit + 1)\r\n"
                            + "Expect: 100-continue\r\n\r\n")
            let response = try client.readResponse(bodyExpected: route.method != .head)
            #expect(response.status == 413, "\(route.method.name) \(route.pattern) with \(route.bodyLimit + 1) bytes: \(response.status)")
        }
        await harness.finish()
    }

    @Test func tokensNeverReachTheLogEvenAtDebugLevel() async throws {
        let log = testDirectory("toursd-log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let harness = try await ServiceHarness(logFile: log, logLevel: .debug)
        let unknown = "nt_" + String(repeating: "f", count: 40)
        for token in [harness.alpha, unknown, "not-even-a-token-format-0123456789"] {
            let client = try harness.client(token)
            _ = try client.send("GET", "/v1/properties")
            _ = try client.send("PUT", "/v1/properties/\(newID())", json: ["name": "Logged?", "floorCount": 1])
            _ = try client.send("GET", "/v1/properties/not-a-uuid")
        }
        let raw = try RawClient(port: harness.port)
        _ = try raw.request("GET", "/v1/properties", headers: ["Authorization": "Basic \(harness.alpha)"])
        // A token a client put in a query string: paths are logged without their query.
        _ = try raw.request("GET", "/v1/properties?access_token=\(harness.alpha)&limit=1", headers: ["Authorization": "Bearer \(harness.alpha)"])
        await harness.finish()
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("/v1/properties")) // the requests were logged...
        for secret in [harness.alpha, unknown, "not-even-a-token-format-0123456789"] {
            #expect(!text.contains(secret)) // ...their tokens never
            #expect(!text.contains(String(secret.suffix(20))))
        }
    }

    /// A query that says two things, or nothing readable, is refused, not guessed at
    /// (security finding: `roomId=%zz` was silently absent, a repeated parameter took the first).
    @Test func malformedEscapesAndRepeatedParametersAreA400() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        for target in ["/v1/panoramas/\(newID())?floorId=\(floorId)&roomId=%zz", "/v1/panoramas/\(newID())?floorId=\(floorId)&floorId=\(floorId)",
                       "/v1/panoramas/\(newID())?floorId=\(floorId)&x=%4"] {
            let response = try client.send("PUT", target, body: [1, 2, 3], headers: ["Content-Type": "image/jpeg"])
            #expect(response.status == 400, "\(target)")
        }
        #expect(try client.send("GET", "/v1/properties?limit=1&limit=2").status == 400)
        #expect(try client.send("GET", "/v1/properties?limit=1").status == 200)
        #expect(harness.storedFiles().isEmpty)
        await harness.finish()
    }

    /// Every SQL statement binds its values: no string interpolation inside a literal handed to
    /// the database, in the server or the client (`execute` runs fixed schema text only).
    @Test func everySQLStatementBindsItsParameters() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        var statements = 0
        var interpolated: [String] = []
        for case let file as String in FileManager.default.enumerator(atPath: sources.path) ?? FileManager.DirectoryEnumerator() where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for literal in Self.sqlLiterals(in: text) {
                statements += 1
                if literal.contains("\\(") { interpolated.append("\(file): \(literal.prefix(80))") }
            }
        }
        #expect(statements > 100) // the scan sees the statements
        #expect(interpolated.isEmpty, "SQL built by interpolation: \(interpolated)")
    }

    /// The string literals passed first to `run(`, `query(`, `first(` and `execute(`, and each
    /// dialect's statement given to `SQLDialect.pick(sqlite:postgresql:)`.
    static func sqlLiterals(in text: String) -> [String] {
        var literals: [String] = []
        let pattern = try! NSRegularExpression(pattern: #"(\.(run|query|first|execute)\(|\b(sqlite|postgresql): )\s*("""|")"#)
        let whole = text as NSString
        for match in pattern.matches(in: text, range: NSRange(location: 0, length: whole.length)) {
            let quote = whole.substring(with: match.range(at: 4))
            let start = match.range.location + match.range.length
            let rest = whole.substring(from: start)
            guard let end = rest.range(of: quote == "\"\"\"" ? "\"\"\"" : "\"") else { continue }
            literals.append(String(rest[..<end.lowerBound]))
        }
        return literals
    }
}
