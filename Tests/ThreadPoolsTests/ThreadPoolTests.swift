import Synchronization
import Testing
import ThreadPools

@Suite struct ThreadPoolTests {
    @Test func runReturnsTheResultAndThrowsTheError() async throws {
        let pool = ThreadPool(name: "test", threads: 2)
        #expect(try await pool.run { 6 * 7 } == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await pool.run { () throws -> Int in throw Failure() } }
        pool.stop()
    }
}
