import Testing
@testable import NTViewerService

/// The sign-in limit's window, pure: the failures and the time are passed in.
@Suite struct SignInWindowTests {
    @Test func anAddressWaitsUntilItsOldestCountedFailureLeavesTheWindow() {
        func wait(_ failures: [Int64], now: Int64) -> Int? { SignInWindow.retryAfter(failures, allowed: 2, window: 60, now: now) }
        #expect(wait([0], now: 1) == nil)
        #expect(wait([0, 10], now: 11) == 49)
        #expect(wait([0, 10], now: 60) == nil) // the first left the window
        #expect(wait([0, 10, 20, 30], now: 31) == 49) // the second most recent counts
        #expect(wait([0, 10], now: -100) == 60) // a clock gone back never waits past a window
    }
}
