import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits

import NTSQLiteDB
import NTThreadPools
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks
@testable import NTPostgresDB

/// docs/storage.md "Reads indexed by what they read": every statement a request runs uses an
/// index that starts with the row it is about (a property, a floor, a room, a panorama, a
/// token), never a scan of a tenant's whole range, so a property's reads cost what the
/// property holds, not what its tenant holds. The statements are the ones the requests below
/// really ran (recorded on their way to the database); each is asked of the database's own
/// planner with the values it ran with (SQLite: EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN of its
/// generic plan with sequential scans priced out, so a small table does not hide a missing
/// index).
@Suite(.hangGuard, .testThreads) struct QueryPlanTests {
    @Test func everyStatementOfARequestUsesAnIndexOfWhatItReads() async throws {
        let recorder = StatementRecorder()
        let harness = try await ServiceHarness(alone: true, storage: { RecordingStorage($0, recorder) })
        let client = try harness.client(harness.alpha)
        try fillLargeTenant(harness)
        let alpha = try #require(try await harness.service.records.read { try await $0.first("SELECT id FROM tenants WHERE name = 'alpha'")?.decodeIfPresent("id", as: Int64.self) })
        recorder.recording.store(true, ordering: .relaxed)
        try walkEveryRoute(harness, client)
        try await walkTheWebhooks(harness, client, tenant: alpha)
        // The bucket's sweep asks which of a page of names the rows name.
        let swept = [BlobKey(tenant: alpha, kind: .panorama, id: newID()), BlobKey(tenant: alpha, kind: .worldMap, id: "\(newID()).0123abcd"),
                     BlobKey(tenant: alpha, kind: .upload, id: newID())]
        _ = try await harness.service.records.read { try await StoredFiles.named(among: swept, by: $0) }
        recorder.recording.store(false, ordering: .relaxed)
        // The webhook backlog's count (/metrics) reads every endpoint by design, once each
        // metricsRefreshSeconds on a timer, never for a request: not this test's to judge.
        let statements = recorder.statements.filter { $0.sql != WebhookStore.backlogSQL }
        #expect(statements.count > 40, "the requests ran their statements: \(statements.count)")
        let problems = harness.config.databaseUrl.isEmpty
            ? try sqlitePlans(harness.dataDir + "/toursd.sqlite", statements)
            : try postgresPlans(harness.config.databaseUrl, statements)
        #expect(problems.isEmpty, "\(problems.count) statements read a tenant's whole range or a whole table:\n\(problems.joined(separator: "\n"))")
        await harness.finish()
    }

    /// alpha made large (bench/large_tenant.sql: 500 properties, 5,000 panoramas, 500 shares), so that a
    /// tenant's range is not a property's. PostgreSQL is then analyzed, as its autovacuum
    /// would; SQLite is not: its plans must not depend on statistics.
    private func fillLargeTenant(_ harness: ServiceHarness) throws {
        let sql = try String(contentsOf: ServiceHarness.root.appendingPathComponent("bench/large_tenant.sql"), encoding: .utf8)
            .replacingOccurrences(of: "{tenant}", with: "alpha").replacingOccurrences(of: "{properties}", with: "500")
            .replacingOccurrences(of: "{panoramas}", with: "10")
            .replacingOccurrences(of: "{blob}", with: harness.config.databaseUrl.isEmpty ? "BLOB" : "bytea")
        if harness.config.databaseUrl.isEmpty {
            try Database(path: harness.dataDir + "/toursd.sqlite").execute(sql)
        } else {
            let connection = try PostgresConnection(url: harness.config.databaseUrl)
            try connection.execute(sql)
            try connection.execute("ANALYZE")
        }
    }

    /// The API's and the viewer's routes, each once or more, over a tenant with a few
    /// properties (so a tenant's range is not the property's).
    private func walkEveryRoute(_ harness: ServiceHarness, _ client: APIClient) throws {
        var last: (propertyId: String, floorId: String, roomId: String, panoramaId: String, tourId: String)?
        for _ in 0..<3 {
            let (propertyId, floorId) = try client.makeFloor()
            let roomId = newID()
            #expect(try client.putPlan(floorId, mode: "newScan", rooms: [(roomId, "Kitchen"), (newID(), "Hall")]).status == 200)
            #expect(try client.putPlan(floorId, mode: "newScan", rooms: [(roomId, "Kitchen")]).status == 200) // a room removed
            #expect(try client.putWorldMap(floorId, bytes: imageBytes(300)).status < 300)
            #expect(try client.putPlan(floorId, mode: "continueScan", rooms: [(newID(), "Bath")]).status == 200)
            let panoramaId = newID()
            #expect(try client.putPanorama(panoramaId, floorId: floorId, roomId: roomId, bytes: try JPEGFixture.panorama(width: 64)).status == 201)
            try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(500))
            let tourId = try #require(try client.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
            last = (propertyId, floorId, roomId, panoramaId, tourId)
        }
        let (propertyId, floorId, roomId, panoramaId, tourId) = try #require(last)
        for target in ["/v1/properties", "/v1/properties/\(propertyId)", "/v1/properties/\(propertyId)/status", "/v1/tours/\(tourId)",
                       "/v1/floors/\(floorId)", "/v1/floors/\(floorId)/worldmap", "/v1/panoramas/\(panoramaId)",
                       "/v1/panoramas/\(panoramaId)/content", "/v1/panoramas/\(panoramaId)/preview?width=320",
                       "/v1/events?limit=5", "/v1/events?after=3&limit=5"] {
            #expect(try client.send("GET", target).status == 200, "GET \(target)")
        }
        // A resumable upload: created, a part, its offset, the rest, and one given up.
        let image = imageBytes(200_000)
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: image.count).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, Array(image[0..<100_000])).status == 204)
        #expect(try client.tus("HEAD", location).status == 200)
        #expect(try client.tusPatch(location, offset: 100_000, Array(image[100_000...])).status == 204)
        let abandoned = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 10).header("Location"))
        #expect(try client.tus("DELETE", abandoned).status == 204)
        // A grant: made, used on each kind of place (its lookup and where each thing's property
        // is), listed and revoked; tenant tokens over HTTP.
        let grant = try client.send("POST", "/v1/grants", json: ["scopes": ["capture"], "propertyIds": [propertyId], "expiresInSeconds": 3600])
        let phone = try harness.client(try #require(grant.string("token")) as String)
        for target in ["/v1/properties", "/v1/properties/\(propertyId)", "/v1/tours/\(tourId)", "/v1/floors/\(floorId)", "/v1/panoramas/\(panoramaId)"] {
            #expect(try phone.send("GET", target).status == 200, "GET \(target) with a grant")
        }
        let granted = try #require(try phone.tusCreate(panoramaId: newID(), floorId: floorId, length: 10).header("Location"))
        #expect(try phone.tus("HEAD", "/v1/uploads/" + granted.split(separator: "/")[2]).status == 200)
        #expect(try client.send("GET", "/v1/grants").status == 200)
        #expect(try client.send("DELETE", "/v1/grants/\(try #require(grant.string("id")) as String)").status == 204)
        #expect(try client.send("POST", "/v1/tokens").status == 201 && client.send("GET", "/v1/tokens").status == 200)
        // Shares and the viewer, signed in and through a link.
        let made = try client.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600, "offersOriginals": true])
        let link = try #require(made.string("url"))
        #expect(try client.send("GET", "/v1/tours/\(tourId)/shares").status == 200)
        let anonymous = try harness.client(nil)
        for target in [link, "\(link)/floors/\(floorId)", "\(link)/rooms/\(roomId)", "\(link)/panoramas/\(panoramaId)",
                       "\(link)/panoramas/\(panoramaId)/preview?width=320", "\(link)/panoramas/\(panoramaId)/image"] {
            #expect(try anonymous.send("GET", target).status == 200, "GET \(target)")
        }
        let browser = try ViewerBrowser(harness)
        #expect(try browser.signIn(harness.alpha).status == 303)
        for target in ["/app/", "/app/properties/\(propertyId)", "/app/floors/\(floorId)", "/app/rooms/\(roomId)", "/app/panoramas/\(panoramaId)"] {
            #expect(try browser.send("GET", target).status == 200, "GET \(target)")
        }
        #expect(try client.send("DELETE", "/v1/shares/\(try #require(made.string("id")))").status == 204)
        #expect(try client.send("DELETE", "/v1/panoramas/\(panoramaId)").status == 204)
        #expect(try client.send("DELETE", "/v1/properties/\(propertyId)").status == 204)
    }

    /// The webhook routes, and the deliverer's statements as it runs them for one endpoint
    /// (called directly: the endpoint is made after the last event, so nothing is due and no
    /// delivery leaves the machine).
    private func walkTheWebhooks(_ harness: ServiceHarness, _ client: APIClient, tenant: Int64) async throws {
        let webhook = try client.send("POST", "/v1/webhooks", json: ["url": "https://example.com/hook"])
        let id = try #require(webhook.string("id"), "\(webhook.text)")
        let cursor = try #require(webhook.string("after"))
        for target in ["/v1/webhooks", "/v1/webhooks/\(id)", "/v1/webhooks/\(id)/deliveries"] {
            #expect(try client.send("GET", target).status == 200, "GET \(target)")
        }
        #expect(try client.send("POST", "/v1/webhooks/\(id)/redeliver", json: ["after": cursor]).status == 200)
        let records = harness.service.records
        let now = Int64(Date().timeIntervalSince1970 * 1000), lease = now + 60_000
        _ = try await records.readOne { try await WebhookStore.due($0, nowMs: now, limit: 4) }
        #expect(try await records.write { try await WebhookStore.claim($0, tenant, id, nowMs: now, lease: lease) } != nil)
        let events = try await records.readOne { try await EventStore.page($0, tenant, after: 0, limit: 50) }
        let event = try #require(events.last).id
        let from = try #require(Int64(cursor))
        #expect(try await records.write { try await WebhookStore.pass($0, tenant, id, lease: lease, from: from, to: event) })
        let attempt = WebhookStore.Attempt(event: event, number: 1, status: 200, error: nil, latencyMs: 1)
        #expect(try await records.write { try await WebhookStore.record($0, tenant, id, lease: lease, from: event, attempt: attempt, next: .delivered, keep: 1, at: harness.service.clock.now()) })
        try await records.write { try await WebhookStore.release($0, tenant, id, lease: lease) }
        #expect(try client.send("DELETE", "/v1/webhooks/\(id)").status == 204)
    }

    /// SQLite's plan of each statement: a SCAN of a table, or a SEARCH whose only constraint
    /// is the tenant, is a problem.
    private func sqlitePlans(_ path: String, _ statements: [RecordedStatement]) throws -> [String] {
        let database = try Database(path: path)
        var problems: [String] = []
        for statement in statements where !SearchByName.isIt(statement.sql) {
            let details = try database.query("EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments).compactMap { try $0.decodeIfPresent("detail", as: String.self) }
            let page = SQLitePlan.walksAPageInOrder(statement.sql, details)
            for detail in details where SQLitePlan.readsARange(detail) && !(page && SQLitePlan.searchesTheTenant(detail))
                && !SQLitePlan.scansItsOwnSubquery(statement.sql, detail) {
                problems.append("\(detail)  ←  \(statement.sql)")
            }
        }
        return problems
    }

    /// PostgreSQL's generic plan of each statement, sequential scans priced out: a Seq Scan
    /// left (no index fits) or an index searched by the tenant alone is a problem.
    private func postgresPlans(_ url: String, _ statements: [RecordedStatement]) throws -> [String] {
        let connection = try PostgresConnection(url: url)
        try connection.execute("SET enable_seqscan = off")
        try connection.execute("SET plan_cache_mode = force_generic_plan")
        var problems: [String] = []
        for (index, statement) in statements.enumerated() where !SearchByName.isIt(statement.sql) {
            try connection.execute("PREPARE nt_plan\(index) AS " + PostgresConnection.numbered(statement.sql))
            let values = statement.arguments.map { PostgresPlan.literal($0.sqlValue) }.joined(separator: ", ")
            let rows = try connection.query("EXPLAIN (FORMAT JSON) EXECUTE nt_plan\(index)" + (values.isEmpty ? "" : "(\(values))"))
            try connection.execute("DEALLOCATE nt_plan\(index)")
            for finding in PostgresPlan.rangeReads(try rows.first?.decode(0, as: String.self) ?? "") {
                problems.append("\(finding)  ←  \(statement.sql)")
            }
        }
        return problems
    }
}

/// The viewer's property list, searched by a part of the name: no index finds a substring, so
/// it reads the tenant's properties (one row each, their counts each by an index of the
/// property), a page at a time; the one statement that may.
enum SearchByName {
    static func isIt(_ sql: String) -> Bool { sql.contains("name LIKE ? ESCAPE") || sql.contains("name ILIKE ? ESCAPE") }
}

/// What in SQLite's EXPLAIN QUERY PLAN reads more than the row a statement is about.
enum SQLitePlan {
    /// The tables a tenant's rows are in (a global table's scan is as bad: it grows with all).
    static func readsARange(_ detail: String) -> Bool {
        if detail.hasPrefix("SCAN ") {
            // A table-valued function (json_each of a bound list) and a subquery's own rows are
            // what the statement brought, not stored rows.
            return !(detail.hasPrefix("SCAN json_each") || detail.hasPrefix("SCAN CONSTANT ROW") || detail.contains("VIRTUAL TABLE")
                     || detail.hasPrefix("SCAN (subquery"))
        }
        return searchesTheTenant(detail)
    }

    /// A SEARCH whose only constraint is the tenant (of a table whose rows per tenant grow).
    static func searchesTheTenant(_ detail: String) -> Bool {
        guard detail.hasPrefix("SEARCH "), !boundedPerTenant.contains(where: { detail.hasPrefix("SEARCH \($0) ") }),
              !boundedIndexes.contains(where: { detail.contains(" INDEX \($0) ") }),
              let open = detail.lastIndex(of: "(") else { return false }
        let constraint = detail[open...]
        return constraint == "(tenant_id=?)" || constraint.hasPrefix("(tenant_id>") || constraint.hasPrefix("(tenant_id<")
    }

    /// Tables a tenant holds at most a configured few rows of: its webhook endpoints
    /// (`maxWebhooksPerTenant`, 10 by default, at most 1,000).
    static let boundedPerTenant = ["webhooks"]
    /// Partial indexes a tenant has a configured few rows in: its unrevoked tokens
    /// (`tokensPerTenant` made over HTTP).
    static let boundedIndexes = ["tokens_live_by_tenant"]

    /// A SCAN of a subquery the statement names (`FROM (SELECT …) AS page`): the rows it
    /// brought (a page, itself planned), not stored ones.
    static func scansItsOwnSubquery(_ sql: String, _ detail: String) -> Bool {
        guard detail.hasPrefix("SCAN "), let name = detail.dropFirst(5).split(separator: " ").first else { return false }
        return sql.contains(") AS \(name)\n") || sql.contains(") AS \(name) ")
    }

    /// A page (LIMIT) whose order the index gives (no sort of its own): the walk stops at the
    /// page's end, whatever the tenant holds (a list by name).
    static func walksAPageInOrder(_ sql: String, _ details: [String]) -> Bool {
        sql.contains("LIMIT") && !details.contains { $0.contains("TEMP B-TREE FOR ORDER BY") || $0.contains("TEMP B-TREE FOR RIGHT PART OF ORDER BY") }
    }
}

/// What in PostgreSQL's EXPLAIN (FORMAT JSON) reads more than the row a statement is about.
enum PostgresPlan {
    static func rangeReads(_ json: String) -> [String] {
        guard let plans = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] else { return ["unreadable plan: \(json)"] }
        var found: [String] = []
        for plan in plans {
            guard let root = plan["Plan"] as? [String: Any] else { continue }
            let page = walksAPageInOrder(root)
            func walk(_ node: [String: Any]) {
                let type = node["Node Type"] as? String ?? ""
                let relation = node["Relation Name"] as? String ?? node["Index Name"] as? String ?? ""
                if type == "Seq Scan" { found.append("Seq Scan on \(relation)") }
                if type.contains("Index"), let condition = node["Index Cond"] as? String, searchesTheTenant(condition), !page,
                   !boundedPerTenant.contains(node["Index Name"] as? String ?? "") {
                    found.append("\(type) on \(relation) by \(condition)")
                }
                for child in node["Plans"] as? [[String: Any]] ?? [] { walk(child) }
            }
            walk(root)
        }
        return found
    }

    /// Partial indexes of the uploads still receiving: a tenant has at most
    /// maxUnfinishedUploadsPerTenant rows in them, whatever else it holds. Its webhook
    /// endpoints: at most `maxWebhooksPerTenant`. Its branding: one row, keyed by the tenant.
    static let boundedPerTenant: Set = ["uploads_receiving_by_tenant", "uploads_receiving_by_panorama", "webhooks_pkey", "tokens_live_by_tenant",
                                        "brandings_pkey"]

    /// An index condition on the tenant alone: `(tenant_id = $1)`.
    static func searchesTheTenant(_ condition: String) -> Bool {
        condition.hasPrefix("(tenant_id = ") && !condition.contains(" AND ") && condition.filter { $0 == "(" }.count == 1
    }

    /// A page (a Limit) whose order an index gives (no Sort under it): the walk stops at the
    /// page's end, whatever the tenant holds.
    static func walksAPageInOrder(_ root: [String: Any]) -> Bool {
        func sorts(_ node: [String: Any]) -> Bool {
            (node["Node Type"] as? String)?.contains("Sort") == true || (node["Plans"] as? [[String: Any]] ?? []).contains(where: sorts)
        }
        return root["Node Type"] as? String == "Limit" && !sorts(root)
    }

    /// A bound value as a literal of EXECUTE's argument list.
    static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let number): String(number)
        case .real(let number): "\(number)"
        case .text(let text): "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let bytes): "'\\x" + bytes.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }
}

/// A statement a request ran, with the values it ran with (the last of each distinct SQL).
struct RecordedStatement: Sendable {
    let sql: String
    let arguments: [any SQLBindable]
}

/// Collects the statements run while `recording`.
final class StatementRecorder: Sendable {
    let recording = Atomic<Bool>(false)
    private let seen = Mutex<[String: RecordedStatement]>([:])

    func record(_ sql: String, _ arguments: [any SQLBindable]) {
        guard recording.load(ordering: .relaxed) else { return }
        // Transaction control and the database's own statements are not a request's reads.
        let verb = sql.prefix(6).uppercased()
        guard ["SELECT", "UPDATE", "DELETE", "INSERT", "WITH  "].contains(where: { verb.hasPrefix($0.trimmingCharacters(in: .whitespaces)) }) else { return }
        seen.withLock { $0[sql] = RecordedStatement(sql: sql, arguments: arguments) }
    }

    var statements: [RecordedStatement] { seen.withLock { $0.values.sorted { $0.sql < $1.sql } } }
}

/// A storage that tells `recorder` every statement its bodies run.
final class RecordingStorage: SQLStorage {
    private let inner: any SQLStorage
    private let recorder: StatementRecorder

    init(_ inner: any SQLStorage, _ recorder: StatementRecorder) {
        self.inner = inner
        self.recorder = recorder
    }

    var dialect: SQLDialect { inner.dialect }
    var handlerThreads: ThreadPool { inner.handlerThreads }
    var unavailableReason: String? { inner.unavailableReason }
    var roundTrips: Int? { inner.roundTrips }
    func stop() { inner.stop() }

    func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await inner.read { [recorder] in try await body(RecordingConnection($0, recorder)) }
    }

    func write<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await inner.write { [recorder] in try await body(RecordingConnection($0, recorder)) }
    }

    func readOne<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        try await inner.readOne { [recorder] in try await body(RecordingConnection($0, recorder)) }
    }

    func prefetch(_ query: SQLStatement) -> SQLPendingRows {
        recorder.record(query.sql, query.arguments)
        return inner.prefetch(query)
    }
}

private final class RecordingConnection: SQLConnection {
    let inner: any SQLConnection
    let recorder: StatementRecorder

    init(_ inner: any SQLConnection, _ recorder: StatementRecorder) {
        self.inner = inner
        self.recorder = recorder
    }

    var dialect: SQLDialect { inner.dialect }

    func execute(_ sql: String) async throws { try await inner.execute(sql) }

    func run(_ sql: String, arguments: [any SQLBindable]) async throws -> Int {
        recorder.record(sql, arguments)
        return try await inner.run(sql, arguments: arguments)
    }

    func query(_ sql: String, arguments: [any SQLBindable]) async throws -> [Row] {
        recorder.record(sql, arguments)
        return try await inner.query(sql, arguments: arguments)
    }

    func queries(_ statements: [SQLStatement]) async throws -> [[Row]] {
        for statement in statements { recorder.record(statement.sql, statement.arguments) }
        return try await inner.queries(statements)
    }
}

/// The checks themselves find what they look for (they are not vacuous).
@Suite struct QueryPlanRuleTests {
    @Test func sqlitesScansAndTenantSearchesAreFound() {
        #expect(SQLitePlan.readsARange("SCAN panoramas"))
        #expect(SQLitePlan.scansItsOwnSubquery("SELECT * FROM (SELECT id FROM grants LIMIT ?) AS page\nJOIN x", "SCAN page"))
        #expect(!SQLitePlan.scansItsOwnSubquery("SELECT * FROM grants", "SCAN grants"))
        #expect(SQLitePlan.readsARange("SEARCH panoramas USING PRIMARY KEY (tenant_id=?)"))
        #expect(SQLitePlan.readsARange("SEARCH rooms USING COVERING INDEX rooms_by_floor (tenant_id=?)"))
        #expect(!SQLitePlan.readsARange("SEARCH panoramas USING INDEX panoramas_by_floor (tenant_id=? AND floor_id=?)"))
        #expect(!SQLitePlan.readsARange("SEARCH properties USING PRIMARY KEY (tenant_id=? AND id>?)"))
        #expect(!SQLitePlan.readsARange("SCAN json_each VIRTUAL TABLE INDEX 1:"))
        #expect(SQLitePlan.walksAPageInOrder("SELECT * FROM p WHERE tenant_id = ? ORDER BY name LIMIT ?", ["SEARCH p USING INDEX p_by_name (tenant_id=?)"]))
        #expect(!SQLitePlan.walksAPageInOrder("SELECT * FROM p WHERE tenant_id = ? ORDER BY name LIMIT ?",
                                              ["SEARCH p USING PRIMARY KEY (tenant_id=?)", "USE TEMP B-TREE FOR ORDER BY"]))
    }

    @Test func postgresSeqScansAndTenantOnlyIndexConditionsAreFound() {
        let plan = """
            [{"Plan": {"Node Type": "Nested Loop", "Plans": [
              {"Node Type": "Seq Scan", "Relation Name": "tokens"},
              {"Node Type": "Index Scan", "Index Name": "panoramas_pkey", "Relation Name": "panoramas", "Index Cond": "(tenant_id = $1)"},
              {"Node Type": "Index Only Scan", "Index Name": "rooms_by_floor", "Relation Name": "rooms", "Index Cond": "((tenant_id = $1) AND (floor_id = $2))"}]}}]
            """
        #expect(PostgresPlan.rangeReads(plan) == ["Seq Scan on tokens", "Index Scan on panoramas by (tenant_id = $1)"])
        #expect(!PostgresPlan.searchesTheTenant("(id = shares.tenant_id)") && PostgresPlan.searchesTheTenant("(tenant_id = $3)"))
        let page = """
            [{"Plan": {"Node Type": "Limit", "Plans": [{"Node Type": "Index Scan", "Index Name": "properties_by_name", "Index Cond": "(tenant_id = $1)"}]}}]
            """
        #expect(PostgresPlan.rangeReads(page).isEmpty)
        #expect(PostgresPlan.literal(.text("it's")) == "'it''s'" && PostgresPlan.literal(.blob([0, 255])) == "'\\x00ff'")
    }
}
