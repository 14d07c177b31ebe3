import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// A library on a fresh storage directory.
func makeLibrary() async throws -> NoughtyTours {
    let directory = testDirectory("client")
    return try await NoughtyTours(configuration: Configuration(server: URL(string: "http://127.0.0.1:9")!, token: "t", storageDirectory: directory))
}


@Suite(.hangGuard, .testThreads) struct PropertyManagementTests {
    @Test func createPropertyWorksOfflineWithItsFloorsTitledAsTheScreensDo() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "  Villa  ", floorCount: 3, metadata: ["ref": "A-1"])
        #expect(property.name == "Villa")
        let floors = try await tours.properties.floors(of: property)
        #expect(floors.map(\.name) == ["Ground floor", "Floor 1", "Floor 2"])
        #expect(floors.map(\.number) == [0, 1, 2])
        #expect(floors.allSatisfy { $0.propertyId == property.id })
        // The same handle from every call: equal and hashable alike.
        let again = try await tours.properties.property(id: property.id)
        #expect(again == property)
        #expect(Set([property, again!]).count == 1)
        #expect(try await tours.properties.floors(of: property) == floors)
        #expect(try await tours.properties.properties() == [property])
    }

    @Test(arguments: [("   ", 1, 0), ("x", 0, 0), ("x", 201, 0), ("x", 1, 65), ("a\u{0}b", 1, 0), ("a" + String(repeating: "\u{301}", count: 900), 1, 0)])
    func badInputThrowsInvalidInputAndWritesNothing(name: String, floorCount: Int, metadataKeys: Int) async throws {
        let tours = try await makeLibrary()
        let metadata = Dictionary(uniqueKeysWithValues: (0..<metadataKeys).map { ("k\($0)", "v") })
        await expectInvalidInput { _ = try await tours.properties.createProperty(name: name, floorCount: floorCount, metadata: metadata) }
        #expect(try await tours.properties.properties().isEmpty)
    }

    @Test func metadataTheServerWouldRefuseIsNeverQueued() async throws {
        let tours = try await makeLibrary()
        for metadata in [["": "v"], [String(repeating: "k", count: 129): "v"], ["k\u{1}": "v"], ["k": String(repeating: "v", count: 4097)]] {
            await expectInvalidInput { _ = try await tours.properties.createProperty(name: "Villa", floorCount: 1, metadata: metadata) }
        }
        #expect(try await tours.properties.properties().isEmpty)
    }

    @Test func unknownAndDeletedIdsAreNil() async throws {
        let tours = try await makeLibrary()
        #expect(try await tours.properties.property(id: UUID().uuidString.lowercased()) == nil)
        let property = try await tours.properties.createProperty(name: "Loft", floorCount: 1)
        try await tours.properties.deleteProperty(property)
        #expect(try await tours.properties.property(id: property.id) == nil)
        await #expect(throws: NoughtyToursError.notFound) { try await tours.properties.deleteProperty(property) }
    }

    /// Several processes open one storage directory at once (tours sync beside a capture):
    /// each opens it (found by the power-loss test: they removed each other's write probe).
    @Test func oneStorageOpenedByManyAtOnceOpensForEach() async throws {
        let directory = testDirectory("client")
        let server = URL(string: "http://127.0.0.1:9")!
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    let tours = try await NoughtyTours(configuration: Configuration(server: server, token: "t", storageDirectory: directory))
                    _ = try await tours.properties.properties()
                }
            }
            try await group.waitForAll()
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.hasPrefix(".write-probe") }, "\(names)")
    }

    @Test func storageThatCannotBeCreatedIsStorageUnavailable() async throws {
        let file = testDirectory("not-a-dir")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data([1])))
        do {
            _ = try await NoughtyTours(configuration: Configuration(server: URL(string: "http://127.0.0.1:9")!, token: "t",
                                                                 storageDirectory: file.appendingPathComponent("store")))
            Issue.record("opening storage under a regular file succeeded")
        } catch {
            guard case .storageUnavailable(let reason) = error else { Issue.record("expected storageUnavailable, got \(error)"); return }
            #expect(reason.contains(file.lastPathComponent))
        }
    }

    @Test func statusOfANewPropertyIsPendingWithItsCounts() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 2)
        let status = try await tours.properties.status(of: property)
        #expect(status.property == property)
        #expect(status.tourId == nil)
        #expect(status.sync == .pending)
        #expect(status.floorCount == 2)
        #expect(status.roomCount == 0)
        #expect(status.panoramaCount == 0)
        #expect(!status.isComplete)
    }

    @Test func statusUpdatesYieldsNowThenOncePerChangeAndFinishesOnDelete() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let other = try await tours.properties.createProperty(name: "Other", floorCount: 1)
        var iterator = tours.properties.statusUpdates(for: property).makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.floorCount == 1)
        try await waitUntil("the observer to be registered") { await tours.observerCount == 1 }
        // A change elsewhere does not yield the same value again.
        try await tours.properties.deleteProperty(other)
        // A change of this property yields one new value.
        let floor = try #require(try await tours.properties.floors(of: property).first)
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "Kitchen", outline: [[0, 0], [1, 0], [1, 1]])])
        let second = await iterator.next()
        #expect(second?.roomCount == 1)
        #expect(second != first)
        try await tours.properties.deleteProperty(property)
        #expect(await iterator.next() == nil) // finished
        try await waitUntil("no observer left") { await tours.observerCount == 0 }
    }

    @Test func cancellingTheIteratingTaskFinishesTheStreamAndLeavesNoObserver() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let seen = Counter()
        let task = Task {
            for await _ in tours.properties.statusUpdates(for: property) { await seen.increment() }
        }
        try await waitUntil("the first value") { await seen.value == 1 }
        try await waitUntil("the observer to be registered") { await tours.observerCount == 1 }
        task.cancel()
        await task.value
        try await waitUntil("no observer left") { await tours.observerCount == 0 }
    }
}

/// Expects `body` to throw `invalidInput`.
func expectInvalidInput(_ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("no error was thrown")
    } catch {
        guard case .invalidInput? = error as? NoughtyToursError else { Issue.record("expected invalidInput, got \(error)"); return }
    }
}

actor Counter {
    var value = 0
    func increment() { value += 1 }
}

@Suite(.hangGuard, .testThreads) struct StructureCaptureTests {
    private func worldMap() throws -> URL {
        let url = testDirectory("map")
        try Data([1, 2, 3, 4]).write(to: url)
        return url
    }

    private let square: [[Double]] = [[0, 0], [4, 0], [4, 3], [0, 3]]

    @Test func continueScanOnlyForFloorsWithAPlanAndAWorldMap() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        await #expect(throws: NoughtyToursError.notContinuable) {
            try await tours.structureCapture.apply(floor: floor, mode: .continueScan, rooms: [CapturedRoom(name: "A", outline: square)])
        }
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "A", outline: square)])
        #expect(try await tours.structureCapture.isContinuable(floor) == false)
        await #expect(throws: NoughtyToursError.notContinuable) {
            try await tours.structureCapture.apply(floor: floor, mode: .continueScan, rooms: [CapturedRoom(name: "B", outline: square)])
        }
        try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "A", outline: square)], worldMap: try worldMap())
        #expect(try await tours.structureCapture.continuableFloors(of: property) == [floor])
    }

    @Test func continueScanKeepsRoomIdentityAndNames() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let first = try await tours.structureCapture.apply(floor: floor, mode: .newScan,
                                                           rooms: [CapturedRoom(name: "Kitchen", outline: square), CapturedRoom(name: "Hall", outline: square)],
                                                           worldMap: try worldMap())
        let kitchen = first[0], hall = first[1]
        let continued = try await tours.structureCapture.apply(floor: floor, mode: .continueScan, rooms: [
            CapturedRoom(room: kitchen, name: "Renamed", outline: [[0, 0], [5, 0], [5, 5]]),
            CapturedRoom(name: "Study", outline: square),
        ])
        #expect(continued.count == 3)
        #expect(continued[0] == kitchen) // same id, same name
        #expect(continued[1] == hall) // missing from the upload: stays
        #expect(continued[2].name == "Study")
        #expect(try await tours.structureCapture.isContinuable(floor))
    }

    @Test func newScanReplacesTheRoomsAndClearsTheWorldMap() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let first = try await tours.structureCapture.apply(floor: floor, mode: .newScan,
                                                           rooms: [CapturedRoom(name: "Kitchen", outline: square), CapturedRoom(name: "Hall", outline: square)],
                                                           worldMap: try worldMap())
        let second = try await tours.structureCapture.apply(floor: floor, mode: .newScan,
                                                            rooms: [CapturedRoom(room: first[0], name: "Kitchen", outline: square), CapturedRoom(name: "Bath", outline: square)])
        #expect(second.map(\.id).first == first[0].id)
        #expect(!second.contains(first[1]))
        #expect(try await tours.structureCapture.isContinuable(floor) == false)
        #expect(try await tours.properties.status(of: property).roomCount == 2)
    }

    @Test func badOutlinesAreInvalidInputAndChangeNothing() async throws {
        let tours = try await makeLibrary()
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        await expectInvalidInput {
            try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [CapturedRoom(name: "A", outline: [[0, 0], [1, 1]])])
        }
        #expect(try await tours.properties.rooms(of: floor).isEmpty)
    }
}
