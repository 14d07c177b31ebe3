import Dispatch
import Foundation
import Testing
import TestSupport
import NTThreadPools

/// /metrics' thread counts: every pool's threads while they run, and the jobs waiting for them.
@Suite struct ThreadCensusTests {
    @Test func aPoolIsCountedWhileItsThreadsRunWithTheJobsWaitingForThem() async throws {
        let name = "census-\(UUID().uuidString.prefix(8))"
        func group() -> ThreadCensus.Group? { ThreadCensus.groups.first { $0.name == name } }
        let pool = ThreadPool(name: name, threads: 3)
        #expect(group()?.threads == 3)
        #expect(group()?.waitingJobs == 0)
        // Three jobs hold the three threads; two more wait for them.
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<3 { pool.submit { _ in _ = release.wait(timeout: .now() + 10) } }
        for _ in 0..<2 { pool.submit { _ in } }
        try await waitUntil("the threads busy and two jobs waiting") { group()?.waitingJobs == 2 }
        #expect(group()?.threads == 3)
        for _ in 0..<3 { release.signal() }
        try await waitUntil("the queue drained") { group()?.waitingJobs == 0 }
        pool.stop()
        try await waitUntil("the threads ended") { group() == nil }
    }
}
