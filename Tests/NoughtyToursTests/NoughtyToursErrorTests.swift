import Testing
import TestSupport
import TestTraits
import NTCurlRuntime
@testable import NoughtyTours

@Suite(.hangGuard, .testThreads) struct NoughtyToursErrorTests {
    /// docs/api.md: retryable exactly for 408, 429, 500, 503 and 507, and for transport failures.
    @Test(arguments: [(400, false), (401, false), (404, false), (408, true), (409, false), (413, false),
                      (429, true), (460, false), (500, true), (503, true), (507, true)])
    func serverErrorsAreRetryableExactlyAsAPIMDSays(status: Int, retryable: Bool) {
        #expect(NoughtyToursError.server(status: status, code: "x", message: "m").isRetryable == retryable)
    }

    @Test func transportFailuresAreRetryableAndLocalMistakesAreNot() {
        #expect(NoughtyToursError.transport("reset").isRetryable)
        #expect(!NoughtyToursError.invalidInput("blank name").isRetryable)
        #expect(!NoughtyToursError.notContinuable.isRetryable)
        #expect(!NoughtyToursError.storageUnavailable(reason: "read-only").isRetryable)
    }

    @Test func libcurlInitialisesOnceFromManyThreads() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { try CurlRuntime.ensureStarted() } }
            try await group.waitForAll()
        }
        #expect(CurlRuntime.startFailure == nil)
    }
}
