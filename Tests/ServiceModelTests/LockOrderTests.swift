import Testing
@testable import NTServiceModel

/// docs/storage.md "Lock order": a tus finish takes the upload's ownership, then its finish,
/// then the panorama's turn; a debug build stops at a lock taken against that order.
@Suite struct LockOrderTests {
    @Test func theFinishsOrderIsAllowed() async throws {
        let reached = try await LockOrder.entering(.uploadOwnership) {
            try await LockOrder.entering(.uploadFinishing) {
                try await LockOrder.entering(.panoramaTurn) { LockOrder.innermost }
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
            try await LockOrder.entering(.panoramaTurn) { try await LockOrder.entering(.uploadFinishing) {} }
        }
        await #expect(processExitsWith: .failure) {
            // Two turns taken one by one: a deadlock's shape (several are taken at once, in order).
            try await LockOrder.entering(.panoramaTurn) { try await LockOrder.entering(.panoramaTurn) {} }
        }
    }
    #endif
}
