import Foundation
import Synchronization
import Testing
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

/// The events outbox and its feed (docs/api.md "Events"): every change yields its event once,
/// in the transaction of the change, in order per tenant; a refused change yields none.
@Suite(.hangGuard, .testThreads) struct EventFeedTests {
    /// The feed without the events of panoramas' processing, which come in the background.
    static func withoutProcessing(_ events: [[String: Any]]) -> [[String: Any]] {
        events.filter { !["panorama.processed", "panorama.unreadable"].contains($0["type"] as? String ?? "") }
    }

    /// The whole feed from `after`, page by page (`limit` each).
    static func feed(_ client: APIClient, after: String = "0", limit: Int = 200) throws -> [[String: Any]] {
        var events: [[String: Any]] = []
        var cursor = after
        for _ in 0..<1000 {
            let page = try client.send("GET", "/v1/events?after=\(cursor)&limit=\(limit)")
            #expect(page.status == 200, "\(page.text)")
            let items = try #require(page.json?["items"] as? [[String: Any]])
            let next = try #require(page.string("next"))
            if items.isEmpty {
                #expect(next == cursor) // the feed has no end: asking again goes on from here
                return events
            }
            #expect(next == items.last?["id"] as? String)
            events += items
            cursor = next
        }
        Issue.record("the feed did not end")
        return events
    }

    @Test func everyChangeYieldsItsEventOnceInOrder() async throws {
        let harness = try await ServiceHarness { $0.tourChangedQuietSeconds = 3600 }
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = (newID(), newID())
        try client.putProperty(propertyId, name: "Villa")
        try client.putProperty(propertyId, name: "Villa") // the same again: no change, no event
        try client.putProperty(propertyId, name: "Villa Rosa")
        try client.putFloor(propertyId, floorId, number: 0)
        let roomId = newID()
        let planId = newID()
        #expect(try client.putPlan(floorId, planId: planId, mode: "newScan", rooms: [(roomId, "Kitchen")]).status == 200)
        #expect(try client.putPlan(floorId, planId: planId, mode: "newScan", rooms: [(roomId, "Kitchen")]).status == 200) // a re-send
        #expect(try client.putWorldMap(floorId, bytes: imageBytes(64)).status < 300)
        let panoramaId = newID()
        let image = imageBytes(500)
        #expect(try client.putPanorama(panoramaId, floorId: floorId, roomId: roomId, bytes: image).status == 201)
        #expect(try client.putPanorama(panoramaId, floorId: floorId, roomId: roomId, bytes: image).status == 200) // a re-send
        let resumed = newID()
        let location = try #require(try client.tusCreate(panoramaId: resumed, floorId: floorId, length: 300).header("Location"))
        #expect(try client.tusPatch(location, offset: 0, imageBytes(300)).status == 204)
        #expect(try client.send("DELETE", "/v1/panoramas/\(panoramaId)").status == 204)
        #expect(try client.send("DELETE", "/v1/properties/\(propertyId)").status == 204)

        let all = try Self.feed(client, limit: 3)
        // Each panorama's processing writes what came of it in the background, whenever it
        // ends (PanoramaProcessingTests): left out of the order checked here.
        let events = Self.withoutProcessing(all)
        #expect(events.map { $0["type"] as? String } == ["property.created", "property.updated", "floor.updated", "plan.applied", "worldmap.stored",
                                                        "panorama.stored", "panorama.stored", "panorama.deleted", "property.deleted"])
        #expect(all.map { $0["id"] as? String } == (1...all.count).map { String($0) })
        #expect(events.allSatisfy { $0["propertyId"] as? String == propertyId && ($0["createdAt"] as? String)?.hasSuffix("Z") == true })
        let data = events.map { $0["data"] as? [String: Any] ?? [:] }
        #expect(data[1]["name"] as? String == "Villa Rosa")
        #expect(data[3]["planId"] as? String == planId && data[3]["revision"] as? Int == 1 && data[3]["rooms"] as? Int == 1)
        #expect(data[5]["id"] as? String == panoramaId && data[5]["roomId"] as? String == roomId && data[5]["size"] as? Int == 500)
        #expect(data[6]["id"] as? String == resumed && data[6]["size"] as? Int == 300)
        // The same feed read whole, and from a cursor in the middle.
        #expect(try Self.feed(client).count == all.count)
        let seventh = try #require(events[6]["id"] as? String)
        #expect(Self.withoutProcessing(try Self.feed(client, after: seventh)).map { $0["type"] as? String } == ["panorama.deleted", "property.deleted"])
        await harness.finish()
    }

    /// A change the server refuses writes nothing, its event neither.
    @Test func aRefusedChangeYieldsNoEvent() async throws {
        let harness = try await ServiceHarness { $0.tourChangedQuietSeconds = 3600 }
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let before = try Self.feed(client).count
        #expect(try client.putPanorama(newID(), floorId: floorId, bytes: Array("not an image".utf8)).status == 415)
        #expect(try client.putPlan(floorId, mode: "continueScan", rooms: [(newID(), "Hall")]).status == 409)
        #expect(try Self.feed(client).count == before)
        await harness.finish()
    }

    @Test func eachTenantHasItsOwnFeed() async throws {
        let harness = try await ServiceHarness { $0.tourChangedQuietSeconds = 3600 }
        let alpha = try harness.client(harness.alpha)
        let beta = try harness.client(harness.beta)
        _ = try alpha.makeFloor()
        #expect(try Self.feed(beta).isEmpty)
        try beta.putProperty(newID())
        let betas = try Self.feed(beta)
        #expect(betas.map { $0["id"] as? String } == ["1"] && betas.first?["type"] as? String == "property.created")
        #expect(try Self.feed(alpha).count == 2)
        await harness.finish()
    }

    /// A feed request waiting for its first event answers with the change made meanwhile; one
    /// that nothing comes for answers empty when its wait is over.
    @Test func aWaitingFeedRequestAnswersTheChangeMadeMeanwhile() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let empty = try client.send("GET", "/v1/events?wait=1")
        #expect(empty.status == 200 && (empty.json?["items"] as? [Any])?.isEmpty == true && empty.string("next") == "0")
        let (port, token) = (harness.port, harness.alpha)
        let answer = Mutex<(status: Int, propertyId: String?, text: String)?>(nil)
        let waiting = Thread.detachedTask {
            let page = try? APIClient(port: port, token: token).send("GET", "/v1/events?after=0&wait=20")
            let first = (page?.json?["items"] as? [[String: Any]])?.first
            answer.withLock { $0 = (page?.status ?? 0, first?["propertyId"] as? String, page?.text ?? "") }
        }
        let propertyId = newID()
        try client.putProperty(propertyId)
        await waiting.value
        let page = answer.withLock { $0 }
        #expect(page?.status == 200 && page?.propertyId == propertyId, "\(page?.text ?? "")")
        await harness.finish()
    }

    /// The next event after `cursor`, waiting for it (the feed's long-poll, 20 s at most).
    static func nextEvent(_ client: APIClient, after cursor: String) throws -> [String: Any]? {
        let page = try client.send("GET", "/v1/events?after=\(cursor)&limit=1&wait=20")
        return (page.json?["items"] as? [[String: Any]])?.first
    }

    /// A burst of changes gives one `tour.changed` once they settle, with the tour's counts;
    /// the next comes only after a new change, and a deleted property's pending one never.
    /// A commit wakes the waiting feed requests of the tenants it wrote events for, and no
    /// other's: one tenant's writes cost nothing to another's long-polls.
    @Test func aCommitWakesOnlyItsOwnTenantsWaitingFeeds() async throws {
        let harness = try await ServiceHarness(alone: true)
        let records = harness.service.records
        let ids = try await records.readOne { try await $0.query("SELECT id, name FROM tenants") }
        let alphaId = try #require(try ids.first { try $0.decode("name", as: String.self) == "alpha" }?.decode("id", as: Int64.self))
        let waits = records.commits.of(alphaId)
        let mark = waits.mark()
        let woken = Task { await waits.awaitSignal(since: mark, upTo: 60_000) }
        try await waitUntil("the wait to be registered") { !waits.isEmpty }
        let beta = try harness.client(harness.beta)
        for _ in 0..<10 { #expect(try beta.send("PUT", "/v1/properties/\(newID())", json: ["name": "B", "floorCount": 1]).status == 201) }
        #expect(waits.mark() == mark && !waits.isEmpty, "beta's commits woke alpha's wait")
        let alpha = try harness.client(harness.alpha)
        #expect(try alpha.send("PUT", "/v1/properties/\(newID())", json: ["name": "A", "floorCount": 1]).status == 201)
        await woken.value
        #expect(waits.mark() == mark + 1)
        await harness.finish()
    }

    @Test func aTourChangedComesOnceItsChangesSettle() async throws {
        let quiet = 2
        let harness = try await ServiceHarness { $0.tourChangedQuietSeconds = quiet; $0.tourChangedCheckMs = 100 }
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let roomId = newID()
        #expect(try client.putPlan(floorId, mode: "newScan", rooms: [(roomId, "Kitchen")]).status == 200)
        #expect(try client.putPanorama(newID(), floorId: floorId, roomId: roomId, bytes: imageBytes(700)).status == 201)
        let sofar = try Self.feed(client)
        var cursor = sofar.last?["id"] as? String ?? "0"
        var settled: [[String: Any]] = []
        var processed = sofar.contains { $0["type"] as? String == "panorama.unreadable" }
        // The panorama's own outcome (panorama.unreadable) comes before or after it, by the
        // processing's pace; both come before the feed is quiet.
        for _ in 0..<3 where settled.isEmpty || !processed {
            let event = try #require(try Self.nextEvent(client, after: cursor))
            cursor = try #require(event["id"] as? String)
            switch event["type"] as? String {
            case "tour.changed": settled.append(event)
            case "panorama.unreadable": processed = true
            default: break
            }
        }
        #expect(processed && settled.count == 1)
        let first = try #require(settled.first, "no tour.changed after the changes settled")
        #expect(first["propertyId"] as? String == propertyId)
        let counts = first["data"] as? [String: Any] ?? [:]
        #expect(counts["floors"] as? Int == 1 && counts["rooms"] as? Int == 1 && counts["panoramas"] as? Int == 1 && counts["panoramaBytes"] as? Int == 700,
                "\(counts)")
        // Nothing more until something changes.
        let quietPage = try client.send("GET", "/v1/events?after=\(cursor)&wait=\(quiet + 1)")
        #expect((quietPage.json?["items"] as? [Any])?.isEmpty == true, "\(quietPage.text)")
        try client.putProperty(propertyId, name: "Renamed")
        let renamed = try #require(try Self.nextEvent(client, after: cursor))
        #expect(renamed["type"] as? String == "property.updated")
        let second = try #require(try Self.nextEvent(client, after: renamed["id"] as? String ?? ""))
        #expect(second["type"] as? String == "tour.changed" && second["propertyId"] as? String == propertyId)
        // A property deleted before its changes settle gets no tour.changed.
        let (gone, _) = try client.makeFloor()
        #expect(try client.send("DELETE", "/v1/properties/\(gone)").status == 204)
        let after = try Self.feed(client).last?["id"] as? String ?? "0"
        let nothing = try client.send("GET", "/v1/events?after=\(after)&wait=\(quiet + 1)")
        #expect((nothing.json?["items"] as? [Any])?.isEmpty == true, "\(nothing.text)")
        await harness.finish()
    }

    @Test(arguments: ["after=-1", "after=x", "limit=0", "limit=201", "wait=31", "wait=1.5"])
    func badFeedQueriesAre400(query: String) async throws {
        let harness = try await ServiceHarness()
        let response = try harness.client(harness.alpha).send("GET", "/v1/events?\(query)")
        #expect(response.status == 400 && response.errorCode == "bad_request", "\(query): \(response.text)")
        await harness.finish()
    }

    /// An unfinished upload that expires says so; events past their retention go.
    @Test func anExpiredUploadSaysSoAndOldEventsGo() async throws {
        let harness = try await ServiceHarness { $0.uploadSweepIntervalSeconds = 1; $0.tourChangedQuietSeconds = 3600 }
        let client = try harness.client(harness.alpha)
        let (_, floorId) = try client.makeFloor()
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 1000).header("Location"))
        harness.clock.moveOn(seconds: Int64(harness.config.uploadExpirySeconds) + 1)
        try await waitUntil("the upload expires") { try Self.feed(client).last?["type"] as? String == "upload.expired" }
        let expired = try #require(try Self.feed(client).last?["data"] as? [String: Any])
        #expect(expired["uploadId"] as? String == location.split(separator: "/").dropFirst(2).first.map(String.init) && expired["floorId"] as? String == floorId)
        // Past the retention every event so far goes (the clock's move settles the tour's
        // changes too: their tour.changed is new, and stays).
        let old = Set(try Self.feed(client).compactMap { $0["id"] as? String })
        harness.clock.moveOn(seconds: Int64(harness.config.eventRetentionDays) * 86_400 + 1)
        try await waitUntil("old events go") { try Self.feed(client).allSatisfy { !old.contains($0["id"] as? String ?? "") } }
        #expect(try Self.feed(client).allSatisfy { $0["type"] as? String == "tour.changed" })
        await harness.finish()
    }
}
