import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// docs/client.md "Failures a host can explain": failures read from local storage after a
/// restart, and events that never drop what matters.
@Suite(.hangGuard, .testThreads) struct FailureReportingTests {
    /// A refused plan (its floor gone on the server) and a server that cannot be reached:
    /// both explained by uploadFailures(of:), from a fresh library on the same storage.
    @Test func uploadFailuresSurviveARestart() async throws {
        let server = try LiveServer()
        let directory = testDirectory("client")
        var tours: NoughtyTours? = try await makeSyncingLibrary(server: server.url, token: server.token, directory: directory)
        let property = try await tours!.properties.createProperty(name: "Explained", floorCount: 2)
        let floors = try await tours!.properties.floors(of: property)
        try await drain(tours!)
        // Gone on the server behind this station's back: the plan is refused for good.
        #expect(try RawClient(port: server.port).request("DELETE", "/v1/properties/\(property.id)", headers: ["Authorization": "Bearer \(server.token)"]).status == 204)
        try await tours!.structureCapture.apply(floor: floors[0], mode: .newScan, rooms: [CapturedRoom(name: "K", outline: [[0, 0], [1, 0], [1, 1]])])
        let before = Date()
        try await drain(tours!)
        tours = nil

        let reopened = try await makeSyncingLibrary(server: server.url, token: server.token, directory: directory)
        let failures = try await reopened.properties.uploadFailures(of: property)
        #expect(failures.count == 1)
        let refused = try #require(failures.first)
        #expect(refused.item == UploadItem(propertyId: property.id, kind: .plan, entityId: floors[0].id))
        #expect(refused.attempts == 1 && !refused.willRetry)
        guard case .server(404, "not_found", let message) = refused.lastError else {
            Issue.record("not the server's 404: \(refused.lastError)")
            return
        }
        #expect(message.contains(floors[0].id))
        #expect(refused.failedAt >= before.addingTimeInterval(-1) && refused.failedAt <= Date())

        // The server down: a floor's upload fails three times, each attempt explained.
        server.stop()
        try await reopened.structureCapture.apply(floor: floors[1], mode: .newScan, rooms: [CapturedRoom(name: "L", outline: [[0, 0], [1, 0], [1, 1]])])
        try await drain(reopened)
        let unreachable = try #require(try await reopened.properties.uploadFailures(of: property).first { $0.item.entityId == floors[1].id })
        #expect(unreachable.attempts == 3 && !unreachable.willRetry)
        guard case .transport = unreachable.lastError else {
            Issue.record("not a transport failure: \(unreachable.lastError)")
            return
        }
        // sync() forgives: nothing failed any more until the next attempt.
        try await reopened.sync()
        #expect(try await reopened.properties.uploadFailures(of: property).isEmpty)
    }

    /// A panorama whose file vanished from local storage (found by the power-loss test: the
    /// transfer's handle was freed twice and the process aborted): its item fails at once,
    /// explained; the other items upload.
    @Test func aPanoramaWhoseFileVanishedFailsExplainedWithoutACrash() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let tours = try await makeSyncingLibrary(server: server.url, token: server.token)
        let property = try await tours.properties.createProperty(name: "Vanished", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let session = try await tours.panoramaCapture.session(floor: floor)
        let gone = try await capturePanorama(session, seed: 1)
        let kept = try await capturePanorama(session, seed: 2)
        let path = try #require(try await tours.store.read { db in try db.first("SELECT path FROM panoramas WHERE id = ?", gone)?.decodeIfPresent(0, as: String.self) })
        try FileManager.default.removeItem(atPath: path)
        try await drain(tours)
        let failures = try await tours.properties.uploadFailures(of: property)
        #expect(failures.map(\.item.entityId) == [gone])
        guard case .invalidInput(let reason)? = failures.first?.lastError else {
            Issue.record("not invalidInput: \(String(describing: failures.first?.lastError))")
            return
        }
        #expect(reason.contains(path) && failures.first?.willRetry == false)
        #expect(try server.json("/v1/panoramas/\(kept)")["id"] as? String == kept)
    }

    /// Every attemptFailed reaches a slow reader while 10,000 progress events flow, in order;
    /// progress is coalesced, so the reader's buffer stays small.
    @Test func eventsDeliverEveryFailureWhileProgressFloods() async throws {
        let tours = try await makeLibrary()
        let events = tours.events()
        let items = (0..<4).map { UploadItem(propertyId: "p", kind: .panorama, entityId: "pano-\($0)") }
        let done = UploadItem(propertyId: "p", kind: .property, entityId: "end")
        let reader = Task {
            var failures: [Int] = []
            var progress: [UploadItem: Int64] = [:]
            var ordered = true
            for await event in events {
                switch event {
                case .attemptFailed(_, _, let attempt, _): failures.append(attempt)
                case .progress(let item, let sent, _):
                    ordered = ordered && sent >= progress[item, default: 0]
                    progress[item] = sent
                case .uploaded(let item) where item == done: return (failures, progress, ordered)
                case .uploaded, .resumed: break
                }
                // A slow reader: the producer runs far ahead of it.
                try? await Task.sleep(for: .microseconds(200))
            }
            return (failures, progress, ordered)
        }
        var mostUnread = 0
        for index in 0..<10_000 {
            tours.syncEvents.send(.progress(items[index % 4], sent: Int64(index), total: 10_000))
            if index % 100 == 99 {
                tours.syncEvents.send(.attemptFailed(items[index % 4], .transport("reset"), attempt: index / 100, willRetry: true))
            }
            mostUnread = max(mostUnread, events.listening.buffer.unread)
        }
        tours.syncEvents.send(.uploaded(done))
        let (failures, progress, ordered) = await reader.value
        #expect(failures == Array(0..<100))
        #expect(ordered)
        #expect(progress[items[3]] == 9_999) // the latest of each item arrives
        #expect(mostUnread <= 100 + 4 * 101, "unread events peaked at \(mostUnread)")
    }

    /// EventQueue's rule, directly: a progress event replaces its item's unread one unless
    /// another event of the item came after it.
    @Test func progressIsCoalescedOnlyWhereOrderAllows() {
        let item = UploadItem(propertyId: "p", kind: .panorama, entityId: "a")
        let other = UploadItem(propertyId: "p", kind: .panorama, entityId: "b")
        var queue = EventQueue()
        queue.append(.progress(item, sent: 1, total: 9))
        queue.append(.progress(other, sent: 1, total: 9))
        queue.append(.progress(item, sent: 2, total: 9))
        queue.append(.attemptFailed(item, .transport("x"), attempt: 1, willRetry: true))
        queue.append(.progress(item, sent: 3, total: 9))
        queue.append(.progress(item, sent: 4, total: 9))
        var read: [SyncEvent] = []
        while let event = queue.popFirst() { read.append(event) }
        #expect(read == [.progress(item, sent: 2, total: 9), .progress(other, sent: 1, total: 9),
                         .attemptFailed(item, .transport("x"), attempt: 1, willRetry: true), .progress(item, sent: 4, total: 9)])
    }
}
