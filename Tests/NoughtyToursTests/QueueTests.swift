import NTAPIModel
import Foundation
import NTHashing
import NTSQLiteDB
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// The queue's rules as pure functions and SQL, without a server.
@Suite(.hangGuard, .testThreads) struct RetryPolicyTests {
    private var policy: RetryPolicy {
        var options = SyncOptions()
        options.initialBackoff = .seconds(2)
        options.maxBackoff = .seconds(60)
        options.jitter = 0.5
        return RetryPolicy(options)
    }

    @Test(arguments: [408, 429, 500, 503, 507])
    func retryableAnswersAreTriedThreeTimesInAll(status: Int) {
        let error = NoughtyToursError.server(status: status, code: "x", message: "")
        #expect(policy.decide(error, attempt: 1, random: 0) == .retry(after: .seconds(1)))
        #expect(policy.decide(error, attempt: 2, random: 0) == .retry(after: .seconds(2)))
        #expect(policy.decide(error, attempt: 3, random: 0) == .fail)
        #expect(policy.decide(.transport("refused"), attempt: 2, random: 0.999) != .fail)
        #expect(policy.decide(.transport("refused"), attempt: 3, random: 0) == .fail)
    }

    @Test(arguments: [400, 401, 404, 409, 413, 415, 460])
    func anotherClientErrorFailsAtOnce(status: Int) {
        #expect(policy.decide(.server(status: status, code: "x", message: ""), attempt: 1, random: 0.5) == .fail)
        #expect(policy.decide(.invalidInput("the file is gone"), attempt: 1, random: 0.5) == .fail)
    }

    @Test func backoffDoublesIsCappedAndJitterDrawsItsShareAtRandom() {
        #expect(policy.delay(afterAttempt: 1, random: 1) == .seconds(2))
        #expect(policy.delay(afterAttempt: 2, random: 1) == .seconds(4))
        #expect(policy.delay(afterAttempt: 3, random: 1) == .seconds(8))
        #expect(policy.delay(afterAttempt: 10, random: 1) == .seconds(60))
        #expect(policy.delay(afterAttempt: 40, random: 1) == .seconds(60))
        #expect(policy.delay(afterAttempt: 2, random: 0) == .seconds(2)) // half of it is jitter
        let drawn = policy.delay(afterAttempt: 2, random: 0.25)
        #expect(drawn == .milliseconds(2500))
    }

    @Test func retryAfterIsHonouredUpToTheCap() {
        let busy = NoughtyToursError.server(status: 503, code: "unavailable", message: "")
        #expect(policy.decide(busy, attempt: 1, retryAfter: .seconds(30), random: 0) == .retry(after: .seconds(30)))
        #expect(policy.decide(busy, attempt: 1, retryAfter: .seconds(3600), random: 0) == .retry(after: .seconds(60)))
        #expect(policy.decide(busy, attempt: 1, retryAfter: .zero, random: 0) == .retry(after: .seconds(1)))
    }

    @Test func optionsServersAndTokensTheQueueCannotUseAreRefused() async throws {
        var options = SyncOptions()
        options.concurrentTransfers = 0
        await expectInvalidInput { _ = try await makeSyncingLibrary(server: URL(string: "http://127.0.0.1:9")!, token: "t", options: options) }
        options = SyncOptions()
        options.jitter = 1.5
        await expectInvalidInput { _ = try await makeSyncingLibrary(server: URL(string: "http://127.0.0.1:9")!, token: "t", options: options) }
        await expectInvalidInput { _ = try await makeSyncingLibrary(server: URL(string: "ftp://example.com")!, token: "t") }
        for token in ["", "nt_a b", "nt_a\r\nX-Injected: 1", "nt_é"] { // a header line must stay one header
            await expectInvalidInput { _ = try await makeSyncingLibrary(server: URL(string: "http://127.0.0.1:9")!, token: token) }
        }
    }
}

@Suite(.hangGuard, .testThreads) struct ItemRequestTests {
    private let server = ServerEndpoint(server: URL(string: "http://127.0.0.1:8080/")!, token: "nt_secret")
    private let file = PanoramaFile(id: "p1", floorId: "f1", roomId: "r1", position: try! PanoramaPosition(x: 2.5, y: -1, heading: -90),
                                    path: "/tmp/p1.jpg", contentType: "image/jpeg", size: 1000,
                                    sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")

    @Test func aSmallPanoramaIsOnePutWithItsDigestItsRoomAndItsPosition() {
        let request = ItemRequests.panorama(server, file)
        #expect(request.method == "PUT")
        #expect(request.url == "http://127.0.0.1:8080/v1/panoramas/p1?floorId=f1&roomId=r1&x=2.5&y=-1&heading=270")
        let unplaced = PanoramaFile(id: file.id, floorId: file.floorId, roomId: nil, position: nil, path: file.path, contentType: file.contentType,
                                size: file.size, sha256: file.sha256)
        #expect(ItemRequests.panorama(server, unplaced).url == "http://127.0.0.1:8080/v1/panoramas/p1?floorId=f1")
        #expect(request.header("authorization") == "Bearer nt_secret")
        #expect(request.header("content-type") == "image/jpeg")
        #expect(request.header("repr-digest") == "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:")
        #expect(request.body == .file(path: "/tmp/p1.jpg", offset: 0, length: 1000))
    }

    @Test func aLargePanoramaIsCreatedWithTusMetadataAndPatchedFromTheOffset() throws {
        let creation = ItemRequests.resumableCreation(server, file)
        #expect(creation.method == "POST" && creation.url.hasSuffix("/v1/uploads"))
        #expect(creation.header("upload-length") == "1000")
        #expect(creation.header("tus-resumable") == "1.0.0")
        let pairs = Dictionary(uniqueKeysWithValues: (creation.header("upload-metadata") ?? "").split(separator: ",").map { pair -> (String, String) in
            let parts = pair.split(separator: " ")
            return (String(parts[0]), String(decoding: ByteEncoding.bytes(fromBase64: parts[1]) ?? [], as: UTF8.self))
        })
        #expect(pairs == ["panoramaId": "p1", "floorId": "f1", "roomId": "r1", "contentType": "image/jpeg", "sha256": file.sha256,
                          "x": "2.5", "y": "-1", "heading": "270"])
        let location = try #require(server.ownURL("/v1/uploads/u1"))
        let patch = ItemRequests.resumablePatch(server, location: location, offset: 400, file)
        #expect(patch.method == "PATCH" && patch.url == "http://127.0.0.1:8080/v1/uploads/u1")
        #expect(patch.header("upload-offset") == "400")
        #expect(patch.header("content-type") == "application/offset+octet-stream")
        #expect(patch.body == .file(path: "/tmp/p1.jpg", offset: 400, length: 600)) // only the rest
        #expect(patch.header("upload-checksum") == nil) // so the server keeps what arrives before a cut
    }

    /// A URL the server names (a tus Location, a world map) is followed only when it is the
    /// server's own: the token is never sent to another host.
    @Test func onlyTheServersOwnURLsAreFollowed() {
        #expect(server.ownURL("/v1/uploads/u1") == "http://127.0.0.1:8080/v1/uploads/u1")
        #expect(server.ownURL("http://127.0.0.1:8080/v1/uploads/u1") == "http://127.0.0.1:8080/v1/uploads/u1")
        for elsewhere in ["http://evil.example/v1/uploads/u1", "//evil.example/x", "http://127.0.0.1:8080.evil.example/x",
                          "https://127.0.0.1:8080/v1/uploads/u1", "v1/uploads/u1", ""] {
            #expect(server.ownURL(elsewhere) == nil, "\(elsewhere)")
        }
    }

    @Test func propertyAndFloorBodiesAreTheAPIsJSON() throws {
        let property = ItemRequests.property(server, id: "a", PropertyInput(name: "Villa", floorCount: 2, metadata: ["k": "v"]))
        guard case .bytes(let body) = property.body else { Issue.record("no body"); return }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(json["name"] as? String == "Villa" && json["floorCount"] as? Int == 2 && json["metadata"] as? [String: String] == ["k": "v"])
        let floor = ItemRequests.floor(server, propertyId: "a", floorId: "b", FloorInput(number: 0, name: nil))
        #expect(floor.url == "http://127.0.0.1:8080/v1/properties/a/floors/b")
        guard case .bytes(let floorBody) = floor.body else { Issue.record("no body"); return }
        #expect(String(decoding: floorBody, as: UTF8.self) == #"{"name":null,"number":0}"#)
    }

    @Test func serverErrorsBecomeTheLibrarysErrorWithTheirCode() {
        let answer = HTTPResponse(status: 409, headers: ["retry-after": "7"],
                                  body: Array(#"{"error":{"code":"conflict","message":"another digest","retryable":false}}"#.utf8))
        #expect(answer.error == .server(status: 409, code: "conflict", message: "another digest"))
        #expect(answer.retryAfter == .seconds(7))
        #expect(HTTPResponse(status: 502, body: Array("Bad Gateway".utf8)).error == .server(status: 502, code: "http_502", message: "Bad Gateway"))
    }
}

@Suite(.hangGuard, .testThreads) struct QueueStoreTests {
    private func claim(_ tours: NoughtyTours, limit: Int = 50, now: Double = Date().timeIntervalSince1970) async throws -> [QueueItem] {
        try await tours.store.write { db in try Queue.claim(db, limit: limit, now: now) }
    }

    @Test func itemsAreClaimedInDependencyOrderAndNeverTwiceAtOnce() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Order", floorCount: 2)
        let first = try await claim(tours)
        #expect(first.map(\.kind) == [.property]) // the floors wait for it
        #expect(try await claim(tours).isEmpty) // in flight: not claimed again
        try await tours.store.write { db in try Queue.succeeded(db, first[0], now: 0) }
        let floors = try await claim(tours, limit: 1)
        #expect(floors.map(\.kind) == [.floor]) // the limit holds
        #expect(try await claim(tours).map(\.kind) == [.floor])
        let status = try await tours.properties.status(of: property)
        #expect(status.sync == .syncing)
    }

    @Test func aFailedAttemptWaitsOutItsBackoffAndAFailedItemBlocksWhatDependsOnIt() async throws {
        let tours = try await makeLibrary()
        _ = try await tours.properties.createProperty(name: "Backoff", floorCount: 1)
        let now = Date().timeIntervalSince1970
        let item = try #require(try await claim(tours, now: now).first)
        try await tours.store.write { db in try Queue.attemptFailed(db, item, error: .transport("refused"), retryAt: now + 30, now: now) }
        #expect(try await claim(tours, now: now + 29).isEmpty)
        #expect(try await tours.store.read { db in try Queue.nextDue(db, after: now) } == now + 30)
        let again = try #require(try await claim(tours, now: now + 30).first)
        #expect(again.id == item.id && again.attempts == 1)
        try await tours.store.write { db in try Queue.attemptFailed(db, again, error: .server(status: 400, code: "bad_request", message: ""), retryAt: nil, now: now) }
        #expect(try await claim(tours, now: now + 3600).isEmpty) // failed, and the floor waits on it
        try await tours.store.write { db in try Queue.forgive(db) }
        let forgiven = try #require(try await claim(tours, now: now).first)
        #expect(forgiven.id == item.id && forgiven.attempts == 0)
    }

    @Test func interruptedItemsResumeUncountedAndThoseOfADeletedPropertyAreDropped() async throws {
        let tours = try await makeLibrary()
        let kept = try await tours.properties.createProperty(name: "Kept", floorCount: 1)
        let gone = try await tours.properties.createProperty(name: "Gone", floorCount: 1)
        let claimed = try await claim(tours)
        #expect(claimed.count == 2)
        try await tours.properties.deleteProperty(gone)
        // The deletion waits while the property's upload is in flight.
        #expect(try await claim(tours).isEmpty)
        try await tours.store.write { db in try Queue.resumeInterrupted(db) }
        let resumed = try await claim(tours)
        #expect(resumed.map(\.kind) == [.property, .deleteProperty])
        #expect(resumed.first?.entityId == kept.id && resumed.first?.attempts == 0)
    }

    @Test func aPlanWaitsForTheFloorsPreviousPlanAndWorldMapAndAReplacedMapIsNotSent() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Plans", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let outline: [[Double]] = [[0, 0], [1, 0], [1, 1]]
        let map = try recordedFolder(bytes: 100, name: "map.bin").appendingPathComponent("map.bin")
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "A", outline: outline)], worldMap: map)
        try await tours.structureCapture.apply(floor: floor, mode: .continueScan, rooms: [CapturedRoom(name: "B", outline: outline)])
        let chain = try await tours.store.read { db in
            try db.query("SELECT id, kind, depends_on FROM queue_items WHERE entity_id = ? ORDER BY id", floor.id).map { (try $0.decodeIfPresent(0, as: Int64.self), try $0.decodeIfPresent(1, as: String.self), try $0.decodeIfPresent(2, as: Int64.self)) }
        }
        #expect(chain.map(\.1) == ["floor", "plan", "worldmap", "plan"])
        #expect(chain[1].2 == chain[0].0 && chain[2].2 == chain[1].0 && chain[3].2 == chain[2].0)

        // A newScan replaces the map: the old map's item has nothing left to send.
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "C", outline: outline)])
        let item = try #require(try await tours.store.read { db in
            try db.first("SELECT id, attempts, payload FROM queue_items WHERE kind = 'worldmap'").map {
                QueueItem(id: try $0.decode(0, as: Int64.self), propertyId: property.id, kind: .worldmap, entityId: floor.id, payload: try $0.decodeIfPresent(2, as: String.self), attempts: 0)
            }
        })
        let endpoint = ServerEndpoint(server: URL(string: "http://127.0.0.1:9")!, token: "t")
        let work = try await tours.store.read { db in try ItemUploader.work(for: item, db, endpoint) }
        guard case .obsolete = work else { Issue.record("a replaced world map would be sent: \(work)"); return }
    }
}

/// Giving up an item the server will not take, and pruning what is on the server.
@Suite(.hangGuard, .testThreads) struct QueuedUploadTests {
    @Test func aDroppedPlanLetsWhatWaitedForItGoOnAndADroppedPanoramaLeavesStorage() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Dropped", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "A", outline: [[0, 0], [1, 0], [1, 1]])])
        let session = try await tours.panoramaCapture.session(floor: floor)
        let kept = try await capturePanorama(session, seed: 1)
        let refused = try await capturePanorama(session, seed: 2)
        let listed = try await tours.queuedUploads()
        #expect(listed.map(\.item.kind) == [.property, .floor, .plan, .panorama, .panorama])
        #expect(listed.allSatisfy { $0.state == .queued } && listed[3].bytes == 4096)
        let plan = listed[2], refusedItem = try #require(listed.first { $0.item.entityId == refused })
        #expect(listed[3].waitingFor == plan.id) // the panorama comes after the plan
        await #expect(throws: NoughtyToursError.self) { try await tours.dropUpload(listed[0].id) } // the property's own

        try await tours.dropUpload(plan.id)
        let after = try await tours.queuedUploads()
        #expect(!after.contains { $0.id == plan.id })
        #expect(after.first { $0.item.entityId == kept }?.waitingFor == listed[1].id) // now after the floor
        let file = try await tours.store.read { db in try db.first("SELECT path FROM panoramas WHERE id = ?", refused)?.decodeIfPresent(0, as: String.self) }
        try await tours.dropUpload(refusedItem.id)
        #expect(try await tours.properties.status(of: property).panoramaCount == 1)
        #expect(!FileManager.default.fileExists(atPath: try #require(file)))
        await #expect(throws: NoughtyToursError.notFound) { try await tours.dropUpload(refusedItem.id) }
    }

    /// An item being sent is not dropped under its transfer: `busy`, and it stays.
    @Test func anItemInFlightIsNotDropped() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "In flight", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let panorama = try await capturePanorama(await tours.panoramaCapture.session(floor: floor))
        try await tours.store.write { db in _ = try db.run("UPDATE queue_items SET state = 'inflight' WHERE entity_id = ?", panorama) }
        let item = try #require(try await tours.queuedUploads().first { $0.item.entityId == panorama })
        #expect(item.state == .uploading)
        await #expect(throws: NoughtyToursError.busy("upload \(item.id) is being sent now: stop the sync that sends it, then drop it")) {
            try await tours.dropUpload(item.id)
        }
        #expect(try await tours.queuedUploads().contains { $0.id == item.id })
        #expect(try await tours.properties.status(of: property).panoramaCount == 1)
    }

    @Test func pruningRemovesOnlyFilesUploadedBeforeTheCutoffAndKeepsTheRows() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Pruned", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let session = try await tours.panoramaCapture.session(floor: floor)
        let old = try await capturePanorama(session, seed: 1)
        let recent = try await capturePanorama(session, seed: 2)
        let pending = try await capturePanorama(session, seed: 3)
        let now = Date().timeIntervalSince1970
        try await tours.store.write { db in
            try db.run("UPDATE queue_items SET state = 'done', done_at = ? WHERE entity_id = ?", now - 3 * 86_400, old)
            try db.run("UPDATE queue_items SET state = 'done', done_at = ? WHERE entity_id = ?", now - 3_600, recent)
        }
        let paths = try await tours.store.read { db in
            Dictionary(uniqueKeysWithValues: try db.query("SELECT id, path FROM panoramas").map { (try $0.decode(0, as: String.self), try $0.decode(1, as: String.self)) })
        }
        let pruned = try await tours.pruneUploadedPanoramas(olderThan: .seconds(86_400))
        #expect(pruned.files == 1 && pruned.bytes == 4096)
        #expect(!FileManager.default.fileExists(atPath: paths[old]!))
        #expect(FileManager.default.fileExists(atPath: paths[recent]!) && FileManager.default.fileExists(atPath: paths[pending]!))
        #expect(try await tours.properties.status(of: property).panoramaCount == 3)
        #expect(try await tours.pruneUploadedPanoramas(olderThan: .seconds(86_400)).files == 0) // once
    }
}

@Suite(.hangGuard, .testThreads) struct QueueLockTests {
    @Test func oneProcessAtATimeDrainsAStorageDirectory() async throws {
        let directory = testDirectory("client")
        let server = URL(string: "http://127.0.0.1:9")!
        let first = try await makeSyncingLibrary(server: server, token: "t", directory: directory)
        let second = try await makeSyncingLibrary(server: server, token: "t", directory: directory)
        try await first.start()
        let refused = await #expect(throws: NoughtyToursError.self) { try await second.start() }
        guard case .busy(let reason)? = refused else {
            Issue.record("not busy: \(String(describing: refused))")
            return
        }
        #expect(reason.contains("another process is syncing"))
        #expect(refused?.isRetryable == true)
        await first.stop()
        // Released by stop (and by the kernel when a process dies). A child another test of
        // this process is spawning holds a copy of every descriptor from its fork until its
        // exec closes them (O_CLOEXEC), the lock's too: a loaded run once saw busy here. Bounded.
        for attempt in 1...200 {
            do {
                try await second.start()
                break
            } catch {
                guard case .busy = error, attempt < 200 else { throw error }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        await second.stop()
    }
}
