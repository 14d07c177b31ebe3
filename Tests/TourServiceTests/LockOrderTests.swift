import Testing
@testable import NTTourService

/// docs/storage.md "Lock order": a tus finish takes the upload's ownership, then its finish,
/// then the panorama's turn; a debug build stops at a lock taken against that order.
@Suite struct LockOrderTests {
    @Test func theFinishsOrderIsAllowed() async throws {
        let finishing = AsyncKeyedLock<String>(level: .uploadFinishing)
        let turns = AsyncKeyedLock<String>(level: .panoramaTurn)
        let reached = try await LockOrder.entering(.uploadOwnership) {
            try await finishing.withLock("upload") {
                try await turns.withLocks(["b", "a"], by: <) { LockOrder.innermost }
            }
        }
        #expect(reached == .panoramaTurn)
        #expect(LockOrder.innermost == nil) // let go on the way out
        // Ownership asked again after a takeover (holding nothing by then) is allowed too.
        try await LockOrder.entering(.uploadOwnership) { try await LockOrder.entering(.uploadOwnership) {} }
    }

    #if DEBUG
    @Test func aLockTakenAgainstTheOrderStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            let finishing = AsyncKeyedLock<String>(level: .uploadFinishing)
            let turns = AsyncKeyedLock<String>(level: .panoramaTurn)
            try await turns.withLock("panorama") { try await finishing.withLock("upload") {} }
        }
        await #expect(processExitsWith: .failure) {
            let turns = AsyncKeyedLock<String>(level: .panoramaTurn)
            try await turns.withLock("a") { try await turns.withLock("b") {} } // two turns one by one: a deadlock's shape
        }
    }
    #endif
}
