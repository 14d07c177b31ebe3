#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import NTHashing
import NTHTTPCore
import NTLogging
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

/// Webhooks (docs/webhooks.md) against a real receiver on loopback: what it is sent, signed,
/// in order, again after failures, and what the API says of it.
@Suite(.hangGuard, .testThreads) struct WebhookDeliveryTests {
    /// Fast polls and retries; loopback receivers allowed. `alone`: one daemon even in a
    /// balanced run (its /metrics counts what it sent itself).
    private func harness(alone: Bool = false, _ configure: @escaping (inout ToursdConfig) -> Void = { _ in }) async throws -> ServiceHarness {
        try await ServiceHarness(alone: alone, configure: {
            $0.webhookAllowPrivateTargets = true
            $0.webhookPollMs = 50
            $0.webhookBackoffBaseMs = 50
            $0.webhookBackoffMaxMs = 200
            $0.tourChangedQuietSeconds = 3600
            configure(&$0)
        })
    }

    private func makeEndpoint(_ client: APIClient, _ url: String, events: [String]? = nil) throws -> (id: String, key: [UInt8]) {
        var body: [String: Any] = ["url": url]
        if let events { body["events"] = events }
        let made = try client.send("POST", "/v1/webhooks", json: body)
        #expect(made.status == 201, "\(made.text)")
        let secret = try #require(made.string("secret"))
        let key = try #require(StandardWebhooks.key(secret))
        return (try #require(made.string("id")), key)
    }

    /// The feed's events after `cursor`, as its items' JSON texts by id.
    private func feed(_ client: APIClient, after cursor: String) throws -> [(id: String, type: String)] {
        let page = try client.send("GET", "/v1/events?after=\(cursor)&limit=200")
        return ((page.json?["items"] as? [[String: Any]]) ?? []).map { ($0["id"] as? String ?? "", $0["type"] as? String ?? "") }
    }

    @Test func everyChangeReachesTheReceiverSignedOnceAndInOrder() async throws {
        let receiver = try WebhookReceiver()
        let harness = try await harness()
        let client = try harness.client(harness.alpha)
        let start = "0" // a new tenant: no event before these
        let (_, key) = try makeEndpoint(client, receiver.url)
        let (propertyId, floorId) = try client.makeFloor()
        #expect(try client.putPlan(floorId, mode: "newScan", rooms: [(newID(), "Hall")]).status == 200)
        #expect(try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(2000)).status == 201)
        #expect(try client.send("DELETE", "/v1/properties/\(propertyId)").status == 204)
        // The panorama's processing writes its outcome before the property's deletion, or not at
        // all (its row is gone): after the deletion the feed is whole.
        let events = try feed(client, after: start)
        #expect(events.map(\.type).filter { $0 != "panorama.unreadable" } == ["property.created", "floor.updated", "plan.applied", "panorama.stored", "property.deleted"])
        try await waitUntil("the receiver to have every event", seconds: 30) { receiver.received.count >= events.count }
        let received = receiver.received
        #expect(received.map(\.eventId) == events.map(\.id))
        for delivery in received {
            // What a receiver's verifier checks: the signature over id, timestamp and body, with the secret shown once.
            #expect(delivery.signature == StandardWebhooks.signature(key: key, id: delivery.id, timestamp: delivery.timestamp, body: delivery.body))
            #expect(abs(delivery.timestamp - Int64(Date().timeIntervalSince1970)) < 600)
        }
        #expect(Set(received.map(\.id)).count == received.count)
        await harness.finish()
        receiver.stop()
    }

    /// A receiver's connection is kept for the deliveries after it: however many events, no
    /// more connections than threads delivering (counted by a proxy that tunnels each
    /// connection as it is).
    @Test func deliveriesReuseTheReceiversConnection() async throws {
        let receiver = try WebhookReceiver()
        let proxy = try FaultProxy(upstreamPort: receiver.port, tunnels: true)
        defer { proxy.stop() }
        let harness = try await harness { $0.webhookConcurrency = 2 }
        let client = try harness.client(harness.alpha)
        _ = try makeEndpoint(client, "http://127.0.0.1:\(proxy.port)/hook")
        let propertyId = newID()
        for revision in 0..<15 { try client.putProperty(propertyId, name: "Villa \(revision)") }
        try await waitUntil("the receiver to have every event", seconds: 30) { receiver.received.count >= 15 }
        let threads = 2 * harness.services.count
        #expect((1...threads).contains(proxy.connectionsAccepted), "\(proxy.connectionsAccepted) connections for \(receiver.received.count) deliveries")
        await harness.finish()
        receiver.stop()
    }

    /// A receiver that fails (500, a redirect it must not be led by) and then recovers gets
    /// everything after, in order; the log says what each attempt got.
    @Test func aReceiverThatFailsForAWhileGetsEverythingAfterInOrder() async throws {
        let receiver = try WebhookReceiver(answers: [500, 302, 503])
        let harness = try await harness(alone: true)
        let client = try harness.client(harness.alpha)
        let (id, _) = try makeEndpoint(client, receiver.url, events: ["property.created"])
        let names = (0..<4).map { _ in newID() }
        for property in names {
            #expect(try client.send("PUT", "/v1/properties/\(property)", json: ["name": "P", "floorCount": 1]).status == 201)
        }
        try await waitUntil("the receiver to have the four creations", seconds: 30) { receiver.accepted.count >= 4 }
        #expect(receiver.accepted.compactMap { $0.json["propertyId"] as? String } == names)
        #expect(receiver.redirectFollowed == false)
        // The receiver has the body before the daemon has its answer: the daemon records it after.
        try await waitUntil("the fourth delivery to be recorded", seconds: 30) {
            try harness.metric(#"toursd_webhook_deliveries_total{operation="attempt",outcome="delivered"}"#) == 4
        }
        let log = try client.send("GET", "/v1/webhooks/\(id)/deliveries")
        let attempts = (log.json?["items"] as? [[String: Any]] ?? []).reversed().map { ($0["status"] as? Int ?? 0, $0["attempt"] as? Int ?? 0) }
        #expect(attempts.prefix(4).map(\.0) == [500, 302, 503, 200])
        #expect(attempts.prefix(4).map(\.1) == [1, 2, 3, 4])
        // /metrics counts the attempts by outcome, with their latency.
        #expect(try harness.metric(#"toursd_webhook_deliveries_total{operation="attempt",outcome="failed"}"#) == 3)
        #expect(try harness.metric(#"toursd_webhook_deliveries_seconds_count{operation="attempt"}"#) == 7)
        let endpoint = try client.send("GET", "/v1/webhooks/\(id)")
        #expect(endpoint.json?["attempts"] as? Int == 0 && endpoint.json?["failingSince"] is NSNull)
        await harness.finish()
        receiver.stop()
    }

    /// A receiver that is down for a while (its port refuses connections) gets everything
    /// once it is back, in order; meanwhile the log says why each attempt failed.
    @Test func aReceiverDownForAWhileGetsEverythingOnceBack() async throws {
        let down = try PortReservation()
        let harness = try await harness { $0.metricsRefreshSeconds = 1 }
        let client = try harness.client(harness.alpha)
        let (id, _) = try makeEndpoint(client, "http://127.0.0.1:\(down.port)/hook", events: ["property.created"])
        let names = (0..<3).map { _ in newID() }
        for property in names {
            #expect(try client.send("PUT", "/v1/properties/\(property)", json: ["name": "P", "floorCount": 1]).status == 201)
        }
        try await waitUntil("two refused attempts", seconds: 30) {
            (try client.send("GET", "/v1/webhooks/\(id)").json?["attempts"] as? Int ?? 0) >= 2
        }
        let log = (try client.send("GET", "/v1/webhooks/\(id)/deliveries").json?["items"] as? [[String: Any]]) ?? []
        #expect(log.allSatisfy { $0["status"] is NSNull && ($0["error"] as? String)?.isEmpty == false }, "\(log)")
        // The outbox's backlog on /metrics: one endpoint behind, failing.
        try await waitUntil("/metrics to show the endpoint behind and failing", seconds: 10) {
            try harness.metric("toursd_webhook_endpoints_behind") == 1 && harness.metric("toursd_webhook_endpoints_failing") == 1
        }
        down.release()
        let receiver = try WebhookReceiver(port: down.port)
        try await waitUntil("the receiver to have the three creations", seconds: 30) { receiver.accepted.count >= 3 }
        #expect(receiver.accepted.compactMap { $0.json["propertyId"] as? String } == names)
        try await waitUntil("/metrics to show no backlog", seconds: 10) {
            try harness.metric("toursd_webhook_endpoints_behind") == 0 && harness.metric("toursd_webhook_endpoints_failing") == 0
        }
        await harness.finish()
        receiver.stop()
    }

    /// An endpoint failing for webhookRetryHours is disabled, says so in the feed, and is
    /// enabled again by a redelivery, which sends the events after its cursor again.
    @Test func anEndpointFailingTooLongIsDisabledAndARedeliveryBringsItBack() async throws {
        let receiver = try WebhookReceiver(answers: Array(repeating: 500, count: 2))
        let harness = try await harness()
        let client = try harness.client(harness.alpha)
        let (id, _) = try makeEndpoint(client, receiver.url, events: ["property.created"])
        // It has been failing for longer than the window already.
        _ = try await harness.service.records.write { try await $0.run("UPDATE webhooks SET failing_since = 1 WHERE id = ?", id) }
        let property = newID()
        #expect(try client.send("PUT", "/v1/properties/\(property)", json: ["name": "P", "floorCount": 1]).status == 201)
        try await waitUntil("the endpoint to be disabled", seconds: 30) { try client.send("GET", "/v1/webhooks/\(id)").json?["disabledAt"] is String }
        let disabled = try feed(client, after: "0").filter { $0.type == "webhook.disabled" }
        #expect(disabled.count == 1)
        // Its cursor is still before the creation, which it never delivered: from there again.
        let cursor = try #require(try client.send("GET", "/v1/webhooks/\(id)").string("after"))
        // A cursor past the feed's last event would skip what is still to come: refused, and
        // the endpoint stays disabled.
        let past = try client.send("POST", "/v1/webhooks/\(id)/redeliver", json: ["after": "999999"])
        #expect(past.status == 400 && past.errorCode == "bad_request" && past.text.contains("past the last event"), "\(past.text)")
        #expect(try client.send("GET", "/v1/webhooks/\(id)").json?["disabledAt"] is String)
        let again = try client.send("POST", "/v1/webhooks/\(id)/redeliver", json: ["after": cursor])
        #expect(again.status == 200 && again.json?["disabledAt"] is NSNull, "\(again.text)")
        try await waitUntil("the creation to be delivered", seconds: 30) { !receiver.accepted.isEmpty }
        #expect(receiver.accepted.first?.json["propertyId"] as? String == property)
        #expect(receiver.received.count == 3) // two refused, then the redelivered one
        await harness.finish()
        receiver.stop()
    }

    /// toursd killed (SIGKILL) with a delivery in flight (the receiver holds its answer), then
    /// started again: every event of the feed reaches the receiver, in order, none that the
    /// feed lacks; the one in flight at the kill comes twice, with the same webhook-id.
    @Test func toursdKilledMidDeliveryLosesNoEventAndInventsNone() async throws {
        // Eight answered; the ninth held unanswered: toursd dies with it in flight.
        let receiver = try WebhookReceiver(holdingAfter: 8)
        let dataDir = testDirectory("webhook-kill").path
        let configFile = dataDir + ".json"
        defer {
            try? FileManager.default.removeItem(atPath: dataDir)
            try? FileManager.default.removeItem(atPath: configFile)
        }
        try JSONSerialization.data(withJSONObject: ["webhookAllowPrivateTargets": true, "webhookPollMs": 50, "webhookBackoffBaseMs": 50,
                                                    "webhookBackoffMaxMs": 200, "tourChangedQuietSeconds": 3600,
                                                    "webhookTimeoutMs": 1000]) // the dead daemon's lease: 2 × 1 s + 10 s
            .write(to: URL(fileURLWithPath: configFile))
        let first = try ToursdProcess(dataDir: dataDir, extra: ["--config", configFile])
        let token = try first.adminToken
        let client = try APIClient(port: first.port, token: token)
        for _ in 0..<40 {
            #expect(try client.send("PUT", "/v1/properties/\(newID())", json: ["name": "P", "floorCount": 1]).status == 201)
        }
        let made = try client.send("POST", "/v1/webhooks", json: ["url": receiver.url])
        #expect(made.status == 201)
        let webhook = try #require(made.string("id"))
        #expect(try client.send("POST", "/v1/webhooks/\(webhook)/redeliver", json: ["after": "0"]).status == 200)
        try await waitUntil("eight deliveries and a ninth in flight", seconds: 60) { receiver.received.count >= 9 }
        first.signal(SIGKILL)
        _ = first.wait()
        // Eight delivered and the ninth in flight (tried again, perhaps, as its attempts timed out).
        #expect(Set(receiver.received.map(\.id)).count == 9)
        receiver.letGo()

        let second = try ToursdProcess(dataDir: dataDir, extra: ["--config", configFile])
        let again = try APIClient(port: second.port, token: token)
        let feed = ((try again.send("GET", "/v1/events?limit=200").json?["items"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        #expect(feed.count == 40)
        try await waitUntil("every event at the receiver", seconds: 60) { Set(receiver.accepted.map(\.eventId)).isSuperset(of: feed) }
        let received = receiver.received
        #expect(Set(received.map(\.eventId)).isSubset(of: feed), "an event the feed does not hold was delivered")
        var seen: Set<String> = [], firsts: [String] = []
        for delivery in received where seen.insert(delivery.id).inserted { firsts.append(delivery.eventId) }
        #expect(firsts == feed) // in order, each first delivery
        // Only the delivery in flight at the kill comes again (as often as it was tried).
        var ids: Set<String> = [], repeated: Set<String> = []
        for delivery in received where !ids.insert(delivery.id).inserted { repeated.insert(delivery.id) }
        #expect(repeated.count <= 1, "\(repeated.count) events came twice")
        second.signal(SIGTERM)
        _ = second.wait()
        receiver.stop()
    }

    /// A redelivery while a delivery is under way wins: the delivery's later steps move the
    /// cursor only from where it began (compare-and-set), so every event comes again.
    @Test func aRedeliveryDuringADeliveryIsNotUndone() async throws {
        let receiver = try WebhookReceiver(delay: .milliseconds(300))
        let harness = try await harness()
        let client = try harness.client(harness.alpha)
        let (id, _) = try makeEndpoint(client, receiver.url)
        for _ in 0..<6 {
            #expect(try client.send("PUT", "/v1/properties/\(newID())", json: ["name": "P", "floorCount": 1]).status == 201)
        }
        let events = try feed(client, after: "0").map(\.id)
        #expect(events.count == 6)
        try await waitUntil("three delivered", seconds: 30) { receiver.received.count >= 3 }
        let before = receiver.received.count
        #expect(try client.send("POST", "/v1/webhooks/\(id)/redeliver", json: ["after": "0"]).status == 200)
        try await waitUntil("every event again after the redelivery", seconds: 60) {
            Set(receiver.received.dropFirst(before).map(\.eventId)).isSuperset(of: events)
        }
        await harness.finish()
        receiver.stop()
    }

    /// Turns go to the tenant served least recently, then to its endpoint served least
    /// recently: endpoints that always have something due never keep another tenant's turn.
    @Test func endpointsTakeFairTurns() async throws {
        let receiver = try WebhookReceiver()
        // The deliverer's first round is ten minutes off: the test takes the turns.
        let harness = try await harness { $0.webhookPollMs = 600_000 }
        let alpha = try harness.client(harness.alpha), beta = try harness.client(harness.beta)
        let busy = try (0..<3).map { _ in try makeEndpoint(alpha, receiver.url).id }
        let newcomer = try makeEndpoint(beta, receiver.url).id
        for client in [alpha, beta] {
            #expect(try client.send("PUT", "/v1/properties/\(newID())", json: ["name": "P", "floorCount": 1]).status == 201)
        }
        let records = harness.service.records
        _ = try await records.write { try await $0.run("UPDATE webhooks SET after_event_id = 0") }
        // Alpha's endpoints were served a moment ago, the oldest first; beta's never.
        for (index, id) in busy.enumerated() {
            _ = try await records.write { try await $0.run("UPDATE webhooks SET served_at = ? WHERE id = ?", Int64(1000 + index), id) }
        }
        _ = try await records.write { try await $0.run("UPDATE tenants SET webhooks_served_at = 1002 WHERE name = 'alpha'") }
        _ = try await records.write { try await $0.run("UPDATE tenants SET webhooks_served_at = 0 WHERE name = 'beta'") }
        _ = try await records.write { try await $0.run("UPDATE webhooks SET served_at = 0 WHERE id = ?", newcomer) }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let due = try await records.readOne { try await WebhookStore.due($0, nowMs: now, limit: 2) }.map(\.id)
        #expect(due == [newcomer, busy[0]])
        // Once beta is served, alpha's turn: its endpoint served least recently first.
        let tenantBeta = try #require(try await records.readOne { try await $0.first("SELECT id FROM tenants WHERE name = 'beta'")?.decodeIfPresent("id", as: Int64.self) })
        #expect(try await records.write { try await WebhookStore.claim($0, tenantBeta, newcomer, nowMs: now, lease: now + 60_000) } != nil)
        let next = try await records.readOne { try await WebhookStore.due($0, nowMs: now, limit: 4) }.map(\.id)
        #expect(next == busy)
        await harness.finish()
        receiver.stop()
    }

    @Test func endpointsAreManagedWithTheirSecretShownOnce() async throws {
        let harness = try await ServiceHarness(configure: { $0.maxWebhooksPerTenant = 2 })
        let client = try harness.client(harness.alpha)
        let made = try client.send("POST", "/v1/webhooks", json: ["url": "https://hooks.example.com/toursd", "events": ["tour.changed"]])
        #expect(made.status == 201)
        let id = try #require(made.string("id"))
        #expect(made.string("secret")?.hasPrefix("whsec_") == true)
        let listed = try client.send("GET", "/v1/webhooks").json?["items"] as? [[String: Any]]
        #expect(listed?.count == 1 && listed?.first?["secret"] == nil && listed?.first?["events"] as? [String] == ["tour.changed"])
        #expect(try client.send("GET", "/v1/webhooks/\(id)").json?["secret"] == nil)
        // Another tenant sees none of it.
        let other = try harness.client(harness.beta)
        #expect(try other.send("GET", "/v1/webhooks/\(id)").status == 404)
        #expect(try other.send("DELETE", "/v1/webhooks/\(id)").status == 404)
        // Targets it must not reach, and what is not a target.
        for url in ["http://127.0.0.1:9/", "http://[::1]/", "http://169.254.169.254/latest/meta-data", "http://10.0.0.1/", "ftp://example.com/",
                    // Loopback and link-local in the resolver's other spellings.
                    "http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://127.1/", "http://0/", "http://[fe80::1%25lo]/",
                    "https://user:pass@example.com/"] {
            let refused = try client.send("POST", "/v1/webhooks", json: ["url": url])
            #expect(refused.status == 400 && refused.errorCode == "bad_request", "\(url): \(refused.status) \(refused.text)")
        }
        #expect(try client.send("POST", "/v1/webhooks", json: ["url": "https://example.com/", "events": ["nothing.happened"]]).status == 400)
        #expect(try client.send("POST", "/v1/webhooks", json: ["url": "https://example.com/2"]).status == 201)
        #expect(try client.send("POST", "/v1/webhooks", json: ["url": "https://example.com/3"]).status == 409)
        #expect(try client.send("DELETE", "/v1/webhooks/\(id)").status == 204)
        #expect(try client.send("GET", "/v1/webhooks/\(id)").status == 404)
        #expect(try client.send("GET", "/v1/webhooks/\(id)/deliveries").status == 404)
        await harness.finish()
    }

    /// A name that resolves to loopback is refused at delivery when private targets are not
    /// allowed, and the log says why.
    @Test func aNameResolvingToLoopbackIsNotDeliveredTo() async throws {
        let receiver = try WebhookReceiver()
        let harness = try await harness { $0.webhookAllowPrivateTargets = false }
        let client = try harness.client(harness.alpha)
        let (id, _) = try makeEndpoint(client, "http://localhost:\(receiver.port)/hook")
        #expect(try client.send("PUT", "/v1/properties/\(newID())", json: ["name": "P", "floorCount": 1]).status == 201)
        try await waitUntil("the attempt to be logged", seconds: 30) {
            !((try client.send("GET", "/v1/webhooks/\(id)/deliveries").json?["items"] as? [[String: Any]]) ?? []).isEmpty
        }
        let first = try #require((try client.send("GET", "/v1/webhooks/\(id)/deliveries").json?["items"] as? [[String: Any]])?.last)
        #expect(first["status"] is NSNull && (first["error"] as? String)?.contains("webhookAllowPrivateTargets") == true)
        #expect(receiver.received.isEmpty)
        await harness.finish()
        receiver.stop()
    }
}

/// A webhook receiver on 127.0.0.1 (an HTTPServer of the project's own HTTP layer): it keeps
/// every delivery and answers with `answers` in turn, then 200. `/elsewhere` is where its
/// redirects point (a request there means one was followed).
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        let id: String
        let timestamp: Int64
        let signature: String
        let body: [UInt8]
        let status: Int
        var eventId: String { json["id"] as? String ?? "" }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:] }
    }

    /// What came, and whether a redirect was followed.
    private final class Record: Sendable {
        let state = Mutex<(deliveries: [Delivery], redirected: Bool)>(([], false))
        let holding = Mutex<Bool>(true)
    }

    /// Answers the deliveries held, and every one after.
    func letGo() { record.holding.withLock { $0 = false } }

    private let server: HTTPServer
    let port: UInt16
    private let record = Record()
    var url: String { "http://127.0.0.1:\(port)/hook" }
    var received: [Delivery] { record.state.withLock { $0.deliveries } }
    /// The deliveries it answered with a 2xx.
    var accepted: [Delivery] { received.filter { (200..<300).contains($0.status) } }
    var redirectFollowed: Bool { record.state.withLock { $0.redirected } }

    /// `delay`: how long it takes over each answer (a slow receiver). `port`: where it listens
    /// (0: where the OS says). `holdingAfter`: the deliveries after that many are kept
    /// unanswered until `letGo()` (one in flight for as long as a test needs).
    init(answers: [Int] = [], delay: Duration = .zero, port wanted: UInt16 = 0, holdingAfter: Int? = nil) throws {
        let record = self.record
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = wanted
        let router = Router { table in
            table.add(.post, "/hook", bodyLimit: 1 << 20) { request in
                let body = try await request.body.collect(upTo: 1 << 20)
                if delay > .zero { try await Task.sleep(for: delay) }
                let arrived = record.state.withLock { $0.deliveries.count }
                let status = record.state.withLock { state in
                    let status = state.deliveries.count < answers.count ? answers[state.deliveries.count] : 200
                    state.deliveries.append(Delivery(id: request.headers["webhook-id"] ?? "", timestamp: Int64(request.headers["webhook-timestamp"] ?? "") ?? 0,
                                                     signature: request.headers["webhook-signature"] ?? "", body: body, status: status))
                    return status
                }
                if let holdingAfter, arrived >= holdingAfter {
                    for _ in 0..<6000 where record.holding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
                }
                var response = Response(status: HTTPStatus(status, status == 200 ? "OK" : "Test"))
                if status == 302 { response.headers.append(HTTPField(name: "Location", value: "/elsewhere")) }
                return response
            }
            table.add(.post, "/elsewhere", bodyLimit: 1 << 20) { _ in
                record.state.withLock { $0.redirected = true }
                return Response(status: .ok)
            }
        }
        server = HTTPServer(configuration: configuration, router: router, logger: Logger(sink: LogSink(fd: open("/dev/null", O_WRONLY)), level: .error))
        port = try server.start().port
    }

    func stop() { server.shutdown {} }
}
