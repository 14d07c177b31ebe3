import Foundation
import Testing
import TestSupport
import TestTraits
import NTSQLiteDB
@testable import NoughtyTours

/// The client's storage blocks (SQLite commits with synchronous=FULL, file copies, fsyncs):
/// it runs on a thread of its own, never on Swift's cooperative threads, which in a host app
/// are everyone's.
@Suite(.hangGuard, .testThreads) struct StorageThreadTests {
    @Test func theStoreAndTheCaptureSessionsRunOnTheStoragesOwnThread() async throws {
        let directory = testDirectory("client-thread")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tours = try await NoughtyTours(configuration: Configuration(server: URL(string: "http://127.0.0.1:9")!, token: "t", storageDirectory: directory))
        let property = try await tours.properties.createProperty(name: "Villa", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        #expect(try await tours.store.read { _ in tours.store.thread.isCurrent })
        #expect(try await tours.store.write { _ in tours.store.thread.isCurrent })
        #expect(try await tours.store.files { () throws(NoughtyToursError) in tours.store.thread.isCurrent })
        let session = try await tours.panoramaCapture.session(floor: floor)
        #expect(await session.runsOnStorageThread)
        // And never the caller's: a test's task is on the cooperative pool.
        #expect(!tours.store.thread.isCurrent)
    }
}

extension PanoramaCaptureSession {
    var runsOnStorageThread: Bool { store.thread.isCurrent }
}
