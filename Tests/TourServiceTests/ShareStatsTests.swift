import Foundation
import Testing
import NTSQLKit
import NTThreadPools
import Synchronization
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

/// Who looked at a share link (docs/api.md "Share statistics", docs/security.md): views,
/// visitors counted per day from a hash under the day's salt, the viewer's beacons bounded per
/// visit, and `share.viewed` at most once per link per `shareEventMinutes`.
@Suite(.hangGuard, .testThreads) struct ShareStatsTests {
    /// Two visitors behind one office address with the same browser, one of them twice, and a
    /// third elsewhere (a proxy in front names each in X-Forwarded-For).
    private struct Visitor {
        let address: String
        let userAgent: String
        var headers: [String: String] { ["X-Forwarded-For": address, "User-Agent": userAgent] }
    }

    private static let office = Visitor(address: "203.0.113.7", userAgent: "Mozilla/5.0 (Macintosh) Firefox/133.0")
    private static let home = Visitor(address: "198.51.100.20", userAgent: "Mozilla/5.0 (iPhone) Safari/604.1")

    /// The visit a link's opening recorded: its beacon's path, from the page.
    private func open(_ client: APIClient, _ url: String, as visitor: Visitor) throws -> String {
        let page = try client.send("GET", url, headers: visitor.headers)
        #expect(page.status == 200)
        let text = page.text
        guard let start = text.range(of: "data-visit=\""), let end = text[start.upperBound...].firstIndex(of: "\"") else {
            Issue.record("the share page names no visit")
            return ""
        }
        return String(text[start.upperBound..<end])
    }

    private func beacon(_ client: APIClient, _ visit: String, _ panorama: String, seconds: Double) throws -> RawClient.Response {
        try client.send("POST", visit, body: Array("{\"panoramaId\":\"\(panorama)\",\"seconds\":\(seconds)}".utf8), headers: ["Content-Type": "text/plain;charset=UTF-8"])
    }

    /// The drill: three visitors (two addresses, one of them twice) open a link and view its
    /// panoramas; the statistics say 4 views, 2 visitors, each panorama's visits and time; one
    /// `share.viewed` reaches a webhook receiver; no table holds an address or a user agent.
    @Test func threeVisitorsMakeFourViewsOfTwoVisitorsAndOneEvent() async throws {
        let receiver = try WebhookReceiver()
        let harness = try await ServiceHarness(configure: {
            $0.trustedProxies = ["127.0.0.1"]
            $0.webhookAllowPrivateTargets = true
            $0.webhookPollMs = 50
            $0.shareEventMinutes = 60
        })
        let alpha = try harness.client(harness.alpha)
        #expect(try alpha.send("POST", "/v1/webhooks", json: ["url": receiver.url, "events": ["share.viewed"]]).status == 201)
        let (propertyId, floorId) = try alpha.makeFloor()
        let (hall, kitchen) = (newID(), newID())
        for id in [hall, kitchen] { #expect(try alpha.putPanorama(id, floorId: floorId, bytes: try JPEGFixture.panorama(width: 256)).status == 201) }
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let share = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["label": "Sent to the Millers"])
        let (url, shareId) = (try #require(share.string("url")), try #require(share.string("id")))

        // Visitors count per day: the hour moved on below stays in the day at any time of running.
        harness.clock.moveOn(toHour: 9)
        let visitor = try harness.client(nil)
        let first = try open(visitor, url, as: Self.office)
        let colleague = try open(visitor, url, as: Self.office)
        let elsewhere = try open(visitor, url + "/embed", as: Self.home)
        let again = try open(visitor, url, as: Self.office)
        #expect(Set([first, colleague, elsewhere, again]).count == 4 && first.hasPrefix(url + "/visits/"))
        // A HEAD (a link checker's probe) is no view.
        #expect(try visitor.send("HEAD", url, headers: Self.office.headers).status == 200)
        // A minute on: what each reports fits in what its visit has lasted.
        harness.clock.moveOn(seconds: 60)
        for (visit, panorama, seconds) in [(first, hall, 20.4), (first, kitchen, 10.0), (colleague, hall, 5.0), (elsewhere, kitchen, 30.0), (again, hall, 3.0)] {
            #expect(try beacon(visitor, visit, panorama, seconds: seconds).status == 204)
        }
        // A later report of less changes nothing (a reload's count began again).
        #expect(try beacon(visitor, first, hall, seconds: 2).status == 204)

        let stats = try alpha.send("GET", "/v1/shares/\(shareId)/stats")
        #expect(stats.status == 200)
        #expect(stats.int("views") == 4 && stats.int("visitors") == 2, "\(stats.text)")
        let days = try #require(stats.json?["days"] as? [[String: Any]])
        #expect(days.count == 1 && days[0]["views"] as? Int == 4 && days[0]["visitors"] as? Int == 2)
        let panoramas = try #require(stats.json?["panoramas"] as? [[String: Any]])
        #expect(panoramas.map { $0["panoramaId"] as? String } == [kitchen, hall])
        #expect(panoramas.map { $0["visits"] as? Int } == [2, 3])
        #expect(panoramas.map { $0["seconds"] as? Double } == [40, 28.4])
        #expect(stats.json?["seconds"] as? Double == 68.4)
        // The link list says the same.
        let listed = try #require((try alpha.send("GET", "/v1/tours/\(tourId)/shares").json?["items"] as? [[String: Any]])?.first)
        #expect(listed["views"] as? Int == 4 && listed["visitors"] as? Int == 2 && listed["seconds"] as? Double == 68.4)
        // And the agent's property page.
        let agent = try ViewerBrowser(harness)
        #expect(try agent.signIn(harness.alpha).status == 303)
        #expect(try agent.send("GET", "/app/properties/\(propertyId)").text.contains("4 views, 2 visitors, 1 min 8 s watched"))

        // One event for the four openings within shareEventMinutes, to the feed and the receiver.
        let feed = try #require(try alpha.send("GET", "/v1/events?after=0&limit=200").json?["items"] as? [[String: Any]])
        let viewed = feed.filter { $0["type"] as? String == "share.viewed" }
        #expect(viewed.count == 1 && viewed.first?["propertyId"] as? String == propertyId)
        let data = try #require(viewed.first?["data"] as? [String: Any])
        #expect(data["shareId"] as? String == shareId && data["label"] as? String == "Sent to the Millers" && data["views"] as? Int == 1)
        try await waitUntil("the receiver to have the event", seconds: 30) { !receiver.accepted.isEmpty }
        #expect(receiver.accepted.map { $0.json["type"] as? String } == ["share.viewed"])

        // No address and no user agent anywhere in the database: every value of every table read.
        let needles = [Self.office.address, Self.home.address, Self.office.userAgent, Self.home.userAgent, "Firefox", "iPhone"]
        let found = try await harness.service.records.read { db in try await Self.values(db, containing: needles) }
        #expect(found.isEmpty, "\(found)")

        // Past shareEventMinutes, the next opening writes the next event, with the totals.
        harness.clock.moveOn(seconds: 3600)
        _ = try open(visitor, url, as: Self.home)
        try await waitUntil("the second event", seconds: 30) { receiver.accepted.count >= 2 }
        let second = try #require(receiver.accepted.last?.json["data"] as? [String: Any])
        #expect(second["views"] as? Int == 5 && second["visitors"] as? Int == 2)
        await harness.finish()
        receiver.stop()
    }

    /// Openings that arrive together (on every daemon of a balanced run; each of 8 visitors twice)
    /// are each a view, each visitor counted once, and write one `share.viewed` between them: the window is claimed in the opening's own write.
    @Test func openingsAtOnceAreEachAViewAndWriteOneEvent() async throws {
        let harness = try await ServiceHarness { $0.trustedProxies = ["127.0.0.1"] }
        let alpha = try harness.client(harness.alpha)
        let (propertyId, _) = try alpha.makeFloor()
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let share = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:])
        let (url, shareId) = (try #require(share.string("url")), try #require(share.string("id")))
        // Every request written before any answer is read: they arrive together.
        let clients = try (0..<16).map { _ in try RawClient(port: harness.port, timeoutSeconds: 30) }
        for (index, client) in clients.enumerated() {
            try client.send("GET \(url) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 192.0.2.\(index % 8 + 1)\r\nUser-Agent: Visitor/\(index % 8)\r\n\r\n")
        }
        let statuses = clients.map { (try? $0.readResponse().status) ?? -1 }
        #expect(statuses == Array(repeating: 200, count: 16), "\(statuses)")
        let stats = try alpha.send("GET", "/v1/shares/\(shareId)/stats")
        #expect(stats.int("views") == 16 && stats.int("visitors") == 8, "\(stats.text)")
        // The list's totals, kept on the link's row, agree with its visits.
        let listed = try #require((try alpha.send("GET", "/v1/tours/\(tourId)/shares").json?["items"] as? [[String: Any]])?.first)
        #expect(listed["views"] as? Int == 16 && listed["visitors"] as? Int == 8)
        let feed = try #require(try alpha.send("GET", "/v1/events?after=0&limit=200").json?["items"] as? [[String: Any]])
        #expect(feed.filter { $0["type"] as? String == "share.viewed" }.count == 1)
        await harness.finish()
    }

    /// A visit that cannot be written (the disk full) costs the visitor nothing: the page is
    /// shown without a visit to report to, and the log says why.
    @Test func aVisitThatCannotBeWrittenLeavesThePageShown() async throws {
        let logFile = testDirectory("visit-log").path
        defer { try? FileManager.default.removeItem(atPath: logFile) }
        let refusing = WriteSwitch()
        let harness = try await ServiceHarness(logFile: logFile, logLevel: .warn, alone: true, storage: { WriteRefusingStorage($0, refusing: refusing) })
        let alpha = try harness.client(harness.alpha)
        let (propertyId, _) = try alpha.makeFloor()
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let url = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:]).string("url"))
        refusing.refusing.store(true, ordering: .relaxed)
        let page = try harness.client(nil).send("GET", url, headers: Self.home.headers)
        refusing.refusing.store(false, ordering: .relaxed)
        #expect(page.status == 200 && page.text.contains("Villa") && !page.text.contains("data-visit"))
        await harness.finish()
        #expect(try String(contentsOfFile: logFile, encoding: .utf8).contains("a share link's visit was not recorded"))
    }

    /// A visit counts no more time than it has lasted, nor than `shareVisitMaxSeconds`; a
    /// beacon of another link's visit, of a panorama outside the tour, or of a made-up visit is
    /// 404; a malformed one 400. Signed-in pages record no visit.
    @Test func beaconsAreBoundedToTheirVisitAndTheirTour() async throws {
        let harness = try await ServiceHarness(configure: { $0.shareVisitMaxSeconds = 600 })
        let alpha = try harness.client(harness.alpha)
        let (propertyId, floorId) = try alpha.makeFloor()
        let hall = newID()
        #expect(try alpha.putPanorama(hall, floorId: floorId, bytes: try JPEGFixture.panorama(width: 256)).status == 201)
        let (_, otherFloor) = try alpha.makeFloor()
        let elsewhere = newID()
        #expect(try alpha.putPanorama(elsewhere, floorId: otherFloor, bytes: try JPEGFixture.panorama(width: 256)).status == 201)
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let url = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:]).string("url"))
        let shareId = try #require((try alpha.send("GET", "/v1/tours/\(tourId)/shares").json?["items"] as? [[String: Any]])?.first?["id"] as? String)
        let other = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:]).string("url"))

        let visitor = try harness.client(nil)
        let visit = try open(visitor, url, as: Self.home)
        // Just opened: an hour's report counts the second or two the visit has lasted.
        #expect(try beacon(visitor, visit, hall, seconds: 3600).status == 204)
        let early = try alpha.send("GET", "/v1/shares/\(shareId)/stats").json?["seconds"] as? Double ?? -1
        #expect((0...3).contains(early), "\(early)")
        // Two hours on, it counts shareVisitMaxSeconds at most.
        harness.clock.moveOn(seconds: 7200)
        #expect(try beacon(visitor, visit, hall, seconds: 3600).status == 204)
        #expect(try alpha.send("GET", "/v1/shares/\(shareId)/stats").json?["seconds"] as? Double == 600)

        let visitId = String(visit.split(separator: "/").last ?? "")
        #expect(try beacon(visitor, other + "/visits/" + visitId, hall, seconds: 1).status == 404)
        #expect(try beacon(visitor, visit, elsewhere, seconds: 1).status == 404)
        #expect(try beacon(visitor, url + "/visits/" + newID(), hall, seconds: 1).status == 404)
        for body in ["{}", "{\"panoramaId\":\"\(hall)\",\"seconds\":-1}", "{\"panoramaId\":\"x\",\"seconds\":1}", "not json"] {
            let refused = try visitor.send("POST", visit, body: Array(body.utf8))
            #expect(refused.status == 400 && refused.errorCode == "bad_request", "\(body): \(refused.text)")
        }
        #expect(try visitor.send("POST", visit, body: Array(repeating: UInt8(ascii: " "), count: 4096)).status == 413)
        // Another tenant's statistics are 404, as its links.
        #expect(try harness.client(harness.beta).send("GET", "/v1/shares/\(shareId)/stats").status == 404)
        // A revoked link's visits go with it.
        #expect(try alpha.send("DELETE", "/v1/shares/\(shareId)").status == 204)
        #expect(try alpha.send("GET", "/v1/shares/\(shareId)/stats").status == 404)
        let left = try await harness.service.records.read { db in try await db.first("SELECT count(*) FROM share_visits")?.decode(0, as: Int.self) ?? -1 }
        #expect(left == 0)
        await harness.finish()
    }

    /// What is kept, and for how long: a visit as long as its link (gone with it at the sweep
    /// after it expires); a day's salt until the day ends, so that no visitor hash of that day
    /// can be made again.
    @Test func visitsGoWithTheirLinkAndSaltsWithTheirDay() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        let (propertyId, _) = try alpha.makeFloor()
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let url = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600]).string("url"))
        #expect(try harness.client(nil).send("GET", url, headers: Self.home.headers).status == 200)
        let count = { (table: String) in
            try await harness.service.records.read { db in try await db.first("SELECT count(*) FROM \(table)")?.decode(0, as: Int.self) ?? -1 }
        }
        let kept = (try await count("share_visits"), try await count("visitor_salts"))
        #expect(kept == (1, 1))
        await harness.service.sweeps.removeExpiredShares()
        let swept = (try await count("share_visits"), try await count("visitor_salts"))
        #expect(swept == (1, 1))
        harness.clock.moveOn(seconds: 2 * 86_400)
        await harness.service.sweeps.removeExpiredShares()
        let later = (try await count("shares"), try await count("share_visits"), try await count("visitor_salts"))
        #expect(later == (0, 0, 0))
        await harness.finish()
    }

    /// Every table's values that contain any of `needles` (as text, or as text in a blob).
    static func values(_ db: any SQLConnection, containing needles: [String]) async throws -> [String] {
        let tables = try await db.query(db.dialect.pick(
            sqlite: "SELECT name FROM sqlite_master WHERE type = 'table'",
            postgresql: "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()")).map { try $0.decode("name", as: String.self) }
        #expect(tables.contains("share_visits") && tables.contains("visitor_salts"))
        var found: [String] = []
        for table in tables {
            for row in try await db.query("SELECT * FROM \(table)") {
                for (column, value) in zip(row.columns, row.values) {
                    let text: String
                    switch value {
                    case .text(let string): text = string
                    case .blob(let bytes): text = String(decoding: bytes, as: UTF8.self)
                    default: continue
                    }
                    if needles.contains(where: { text.contains($0) }) { found.append("\(table).\(column)") }
                }
            }
        }
        return found
    }
}

/// Whether `WriteRefusingStorage` refuses writes now.
private final class WriteSwitch: Sendable {
    let refusing = Atomic<Bool>(false)
}

/// A database whose writes fail while its switch says so (a full disk), its reads as they are.
private final class WriteRefusingStorage: SQLStorage {
    private let inner: any SQLStorage
    private let switched: WriteSwitch

    init(_ inner: any SQLStorage, refusing: WriteSwitch) {
        self.inner = inner
        switched = refusing
    }

    var dialect: SQLDialect { inner.dialect }
    var handlerThreads: ThreadPool { inner.handlerThreads }
    func stop() { inner.stop() }
    func read<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T { try await inner.read(body) }
    func readOne<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T { try await inner.readOne(body) }
    func prefetch(_ query: SQLStatement) -> SQLPendingRows { inner.prefetch(query) }

    func write<T: Sendable>(_ body: @escaping SQLBody<T>) async throws -> T {
        guard !switched.refusing.load(ordering: .relaxed) else { throw StorageError(.full, "the disk is full") }
        return try await inner.write(body)
    }
}
