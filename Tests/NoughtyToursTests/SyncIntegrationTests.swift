#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// Follows a property's status from its current value until `done` holds (or 60 s pass):
/// every value seen, in order. Returns once the first value is in, so that what follows is
/// seen from the start.
func followStatus(_ tours: NoughtyTours, _ property: Property,
                  until done: @escaping @Sendable (PropertyStatus) -> Bool) async -> Task<[PropertyStatus], Never> {
    let updates = tours.properties.statusUpdates(for: property)
    let (first, firstSeen) = AsyncStream.makeStream(of: Void.self)
    let follower = Task {
        var seen: [PropertyStatus] = []
        for await status in updates {
            seen.append(status)
            if seen.count == 1 { firstSeen.finish() }
            if done(status) { break }
        }
        return seen
    }
    let watchdog = Task {
        try? await Task.sleep(for: .seconds(60))
        follower.cancel()
    }
    for await _ in first {}
    return Task {
        let seen = await follower.value
        watchdog.cancel()
        return seen
    }
}

/// Collects the library's events until cancelled.
final class EventLog: Sendable {
    private final class Events: Sendable {
        let list = Mutex<[SyncEvent]>([])
    }
    private let events = Events()
    private let task: Task<Void, Never>

    init(_ tours: NoughtyTours) {
        let stream = tours.events()
        let events = self.events
        task = Task { for await event in stream { events.list.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    var all: [SyncEvent] { events.list.withLock { $0 } }

    /// The queue has sent its events when `idle()` returns, but this log's reader may not have
    /// taken them all yet: waits (bounded) until what the test expects is in.
    func waitFor(_ what: String, _ condition: @escaping @Sendable ([SyncEvent]) -> Bool) async throws {
        try await waitUntil(what) { condition(self.all) }
    }

    static func isUpload(_ event: SyncEvent) -> Bool { if case .uploaded = event { true } else { false } }
    static func isFailedAttempt(_ event: SyncEvent) -> Bool { if case .attemptFailed = event { true } else { false } }
}

@Suite(.serialized, .hangGuard, .testThreads) struct SyncIntegrationTests {
    /// Two floors with plans and world maps, 20 panoramas (the larger ones resumable).
    private func captureVilla(_ tours: NoughtyTours) async throws -> Property {
        let property = try await tours.properties.createProperty(name: "Villa Sync", floorCount: 2, metadata: ["ref": "S-1", "agent": "ana"])
        for floor in try await tours.properties.floors(of: property) {
            let worldMap = try recordedFolder(bytes: 30_000, name: "map.bin").appendingPathComponent("map.bin")
            let rooms = try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
                CapturedRoom(name: "Kitchen", outline: [[0, 0], [4, 0], [4, 3.5], [0, 3.5]], height: 2.5),
                CapturedRoom(name: nil, outline: [[4, 0], [8, 0], [8, 3.5]]),
            ], worldMap: worldMap)
            for index in 0..<10 {
                let session = index < 6 ? try await tours.panoramaCapture.session(room: rooms[index % 2]) : try await tours.panoramaCapture.session(floor: floor)
                try await capturePanorama(session, bytes: 4_000 + index * 25_000, seed: index + 3)
            }
        }
        return property
    }

    @Test func aPropertyWithFloorsPlansWorldMapsAndTwentyPanoramasSyncsToCompletion() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let tours = try await makeSyncingLibrary(server: server.url, token: server.token, options: fastSync(resumableThreshold: 150_000))
        let property = try await captureVilla(tours)
        let events = EventLog(tours)
        let following = await followStatus(tours, property) { $0.isComplete }
        try await tours.start()
        let seen = await following.value
        await tours.stop()

        // pending → syncing → synced, panoramasUploaded rising to 20, never the same value twice.
        var phases: [SyncState] = []
        for status in seen where phases.last != status.sync { phases.append(status.sync) }
        #expect(phases == [.pending, .syncing, .synced])
        #expect(seen.map(\.panoramasUploaded) == seen.map(\.panoramasUploaded).sorted())
        #expect(seen.first?.panoramasUploaded == 0)
        let last = try #require(seen.last)
        #expect(last.panoramasUploaded == 20 && last.panoramaCount == 20 && last.isComplete)
        #expect(last.panoramasFailed == 0)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 != $1 })

        // The tourId the server assigned is kept locally; the server's tour is the local store.
        let tourId = try #require(last.tourId).uuidString.lowercased()
        #expect(try server.json("/v1/properties/\(property.id)")["tourId"] as? String == tourId)
        let local = try await TourContent.local(tours, property)
        #expect(TourContent.server(try server.json("/v1/tours/\(tourId)")) == local)
        #expect(local.floors.map(\.panoramas.count) == [10, 10])
        #expect(try server.json("/v1/properties/\(property.id)/status")["panoramaCount"] as? Int == 20)
        for floor in local.floors {
            #expect(try server.json("/v1/floors/\(floor.id)")["continuable"] as? Bool == true) // its world map arrived
        }

        // Byte progress for every panorama, up to its size; each item uploaded once.
        let items = try await queueItems(tours).count
        try await events.waitFor("every item's upload to be reported") { $0.filter(EventLog.isUpload).count >= items }
        let uploaded = events.all.compactMap { event -> UploadItem? in if case .uploaded(let item) = event { item } else { nil } }
        #expect(uploaded.filter { $0.kind == .panorama }.count == 20)
        #expect(Set(uploaded).count == uploaded.count)
        let finalProgress = Dictionary(events.all.compactMap { event -> (String, Int64)? in
            if case .progress(let item, let sent, let total) = event, item.kind == .panorama, sent == total { (item.entityId, total) } else { nil }
        }, uniquingKeysWith: max)
        #expect(finalProgress.count == 20)
        #expect(try await queueItems(tours).allSatisfy { $0.state == "done" && $0.attempts == 1 })
    }

    @Test func withTheServerDownStatusSaysPendingThenFailedAfterThreeAttemptsAndSyncCompletesOnceItIsBack() async throws {
        // The server's tenant and token made by a first start; then it is down on a held port.
        let dataDir = testDirectory("toursd").path
        let first = try LiveServer(dataDir: dataDir)
        let token = first.token
        first.stop()
        let down = try PortReservation()

        let tours = try await makeSyncingLibrary(server: URL(string: "http://127.0.0.1:\(down.port)")!, token: token)
        let property = try await tours.properties.createProperty(name: "Offline", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let session = try await tours.panoramaCapture.session(floor: floor)
        for seed in 1...3 { try await capturePanorama(session, seed: seed) }
        let offline = try await tours.properties.status(of: property)
        #expect(offline.sync == .pending && offline.panoramaCount == 3 && offline.tourId == nil)

        let events = EventLog(tours)
        try await tours.start()
        await tours.idle()
        let failed = try await tours.properties.status(of: property)
        #expect(failed.sync == .failed)
        #expect(!failed.isComplete && failed.tourId == nil)
        // The property was tried three times; what depends on it waits, untried.
        let items = try await queueItems(tours)
        #expect(items.first.map { [$0.kind, $0.state] } == ["property", "failed"])
        #expect(items.first?.attempts == 3)
        #expect(items.dropFirst().allSatisfy { $0.state == "pending" && $0.attempts == 0 })
        try await events.waitFor("three failed attempts to be reported") { $0.filter(EventLog.isFailedAttempt).count >= 3 }
        let attempts = events.all.compactMap { event -> (Int, Bool)? in
            if case .attemptFailed(let item, let error, let attempt, let willRetry) = event, item.kind == .property, error.isRetryable { (attempt, willRetry) } else { nil }
        }
        #expect(attempts.map(\.0) == [1, 2, 3])
        #expect(attempts.map(\.1) == [true, true, false])

        // Still failed, not retried on its own...
        await tours.idle()
        #expect(try await queueItems(tours, kind: .property).first?.attempts == 3)
        // ...until the server is back and the user taps sync.
        down.release()
        let second = try LiveServer(dataDir: dataDir, port: down.port)
        defer { second.stop() }
        let following = await followStatus(tours, property) { $0.isComplete }
        try await tours.sync()
        let seen = await following.value
        await tours.stop()
        let done = try #require(seen.last)
        #expect(done.isComplete && done.panoramasUploaded == 3 && done.tourId != nil)
        #expect(try second.json("/v1/properties/\(property.id)/status")["panoramaCount"] as? Int == 3)
        #expect(try await queueItems(tours).allSatisfy { $0.state == "done" })
    }

    /// Any 409 to a tus PATCH means "ask the offset again", within the attempt, even one whose
    /// body says nothing of offsets (make soak once had such a 409's body cut on the way, and
    /// the item failed for good).
    @Test func aPatchAnswered409IsAskedAgainWithinTheAttempt() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let conflicts = Mutex(1)
        let proxy = try FaultProxy(upstreamPort: server.port) { method, path in
            guard method == "PATCH", path.hasPrefix("/v1/uploads/") else { return nil }
            return conflicts.withLock { left in
                defer { left = 0 }
                return left > 0 ? 409 : nil
            }
        }
        defer { proxy.stop() }
        let tours = try await makeSyncingLibrary(server: URL(string: "http://127.0.0.1:\(proxy.port)")!, token: server.token,
                                                 options: fastSync(resumableThreshold: 1024))
        let property = try await tours.properties.createProperty(name: "Conflicted", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        _ = try await capturePanorama(await tours.panoramaCapture.session(floor: floor))
        try await tours.start()
        await tours.idle()
        await tours.stop()
        let item = try #require(try await queueItems(tours, kind: .panorama).first)
        #expect(item.state == "done" && item.attempts == 1, "\(item.state) after \(item.attempts)")
        let patches = proxy.requests.filter { $0.hasPrefix("PATCH /v1/uploads/") }
        #expect(patches.count == 2 && patches[0].hasSuffix(" 409") && patches[1].hasSuffix(" forwarded"), "\(patches)")
        #expect(try server.json("/v1/properties/\(property.id)/status")["panoramaCount"] as? Int == 1)
    }

    /// The answers a fault-injecting proxy gives a panorama's upload before letting it through.
    @Test(arguments: [
        ([503, 503], "done", 3),
        ([503, 503, 503], "failed", 3),
        ([400], "failed", 1),
        ([429], "done", 2),
    ])
    func answersBeforeSuccessDecideTheAttempts(injected: [Int], state: String, attempts: Int) async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let answers = Mutex(injected)
        let proxy = try FaultProxy(upstreamPort: server.port) { method, path in
            guard method == "PUT", path.hasPrefix("/v1/panoramas/") else { return nil }
            return answers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }
        defer { proxy.stop() }
        let tours = try await makeSyncingLibrary(server: URL(string: "http://127.0.0.1:\(proxy.port)")!, token: server.token)
        let property = try await tours.properties.createProperty(name: "Flaky", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let panorama = try await capturePanorama(await tours.panoramaCapture.session(floor: floor))
        try await tours.start()
        await tours.idle()
        await tours.stop()

        let item = try #require(try await queueItems(tours, kind: .panorama).first)
        #expect(item.state == state)
        #expect(item.attempts == attempts)
        let sent = proxy.requests.filter { $0.contains("/v1/panoramas/\(panorama)") }
        #expect(sent.count == attempts)
        let status = try await tours.properties.status(of: property)
        #expect(status.sync == (state == "done" ? .synced : .failed))
        #expect(status.panoramasFailed == (state == "done" ? 0 : 1))
        #expect(status.panoramasUploaded == (state == "done" ? 1 : 0))
        let onServer = try server.json("/v1/properties/\(property.id)/status")["panoramaCount"] as? Int
        #expect(onServer == (state == "done" ? 1 : 0))
    }

    @Test func plansInSequenceThenADeletionReachTheServerInOrder() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let tours = try await makeSyncingLibrary(server: server.url, token: server.token)
        let property = try await tours.properties.createProperty(name: "Sequence", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let outline: [[Double]] = [[0, 0], [3, 0], [3, 3]]
        let map = try recordedFolder(bytes: 10_000, name: "map.bin").appendingPathComponent("map.bin")
        let first = try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "Hall", outline: outline)], worldMap: map)
        // Continued before anything was sent: the server must have the map before this plan.
        let rooms = try await tours.structureCapture.apply(floor: floor, mode: .continueScan, rooms: [CapturedRoom(name: "Study", outline: outline, height: 2.4)])
        let study = try #require(rooms.first { $0.name == "Study" })
        try await capturePanorama(await tours.panoramaCapture.session(room: study))
        try await tours.start()
        await tours.idle()
        let status = try await tours.properties.status(of: property)
        #expect(status.isComplete)
        let onServer = try server.json("/v1/floors/\(floor.id)")
        #expect(onServer["planRevision"] as? Int == 2)
        #expect((onServer["rooms"] as? [[String: Any]])?.compactMap { $0["id"] as? String }.sorted() == (first + [study]).map(\.id).sorted())
        #expect(TourContent.server(try server.json("/v1/tours/\(try #require(status.tourId).uuidString.lowercased())")) == (try await TourContent.local(tours, property)))

        try await tours.properties.deleteProperty(property)
        await tours.idle()
        await tours.stop()
        let gone = try RawClient(port: server.port).request("GET", "/v1/properties/\(property.id)", headers: ["Authorization": "Bearer \(server.token)"])
        #expect(gone.status == 404)
        #expect(try await queueItems(tours, kind: .deleteProperty).map(\.state) == ["done"])
    }

    @Test func stoppingMidTransferPutsTheItemBackUncountedAndTheNextStartFinishesIt() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        var slow = fastSync(resumableThreshold: 1 << 20)
        slow.maxSendBytesPerSecond = 4 << 20
        let storage = testDirectory("client")
        let tours = try await makeSyncingLibrary(server: server.url, token: server.token, options: slow, directory: storage)
        let property = try await tours.properties.createProperty(name: "Stopped", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let panorama = try await capturePanorama(await tours.panoramaCapture.session(floor: floor), bytes: 8 << 20)
        let events = tours.events()
        try await tours.start()
        for await event in events {
            if case .progress(let item, let sent, _) = event, item.entityId == panorama, sent > 2 << 20 { break }
        }
        await tours.stop()
        #expect(try await queueItems(tours, kind: .panorama).map { [$0.state, String($0.attempts)] } == [["pending", "0"]])
        #expect(try await tours.properties.status(of: property).panoramasFailed == 0)

        let again = try await makeSyncingLibrary(server: server.url, token: server.token, directory: storage)
        let resumedEvents = again.events()
        let seen = Task {
            var seen: [SyncEvent] = []
            for await event in resumedEvents {
                seen.append(event)
                if case .uploaded(let item) = event, item.entityId == panorama { break }
            }
            return seen
        }
        try await again.start()
        await again.idle()
        await again.stop()
        #expect(try await queueItems(again, kind: .panorama).map { [$0.state, String($0.attempts)] } == [["done", "1"]])
        // What the server held is told first, and progress counts on from it, never from 0.
        let told = await seen.value
        let offset = try #require(told.lazy.compactMap { if case .resumed(let item, let offset, _) = $0, item.entityId == panorama { offset } else { nil } }.first)
        #expect(offset > 0 && offset < 8 << 20)
        let progress = told.compactMap { if case .progress(let item, let sent, _) = $0, item.entityId == panorama { sent } else { nil } }
        #expect(!progress.isEmpty && progress.allSatisfy { $0 >= offset })
        #expect(try await again.properties.status(of: property).isComplete)
    }
}
