import Foundation
import NTServiceModel
import NTServiceStorage
import NTSQLKit
import NTTourUseCases

/// Failed sign-ins per client address in a sliding window: past `allowed` failures within
/// `window` seconds an address is refused until its oldest failure leaves the window, so a
/// token cannot be guessed from one place at speed. Pure: the failures and the time are
/// passed in.
enum SignInWindow {
    /// Seconds until the address whose failures (oldest first) are `failures` may try again;
    /// nil when it may now.
    static func retryAfter(_ failures: [Int64], allowed: Int, window: Int64, now: Int64) -> Int? {
        let recent = failures.filter { $0 > now - window }
        guard recent.count >= allowed, let oldest = recent.suffix(allowed).first else { return nil }
        return Int(min(window, max(1, oldest + window - now)))
    }
}

/// `SignInWindow` over the attempts recorded in the database, so that every daemon sharing it
/// applies one limit (behind a balancer of N daemons a client would otherwise get N times the
/// tries), and a restart forgets none. The clock is the wall clock, which daemons share. An
/// attempt is checked and counted in one write (`admit`): 200 wrong tokens sent at once are
/// `allowed` tries, not 200. One that succeeds is forgotten (`forget`, in the transaction that
/// starts its session); the failures before it stay, so a client's own sign-ins never buy an
/// attacker at the same address more guesses.
package struct SignInLimiter: Sendable {
    let records: Records
    let allowed: Int
    let window: Int64
    let clock: any ServiceClock

    package init(records: Records, allowed: Int, window: Int, clock: any ServiceClock) {
        self.records = records
        self.allowed = allowed
        self.window = Int64(window)
        self.clock = clock
    }

    private var now: Int64 { clock.unixSeconds }

    enum Admission: Equatable {
        /// The attempt may go on; it was counted at this time.
        case admitted(at: Int64)
        case refused(retryAfterSeconds: Int)
    }

    func admit(_ address: [UInt8]) async throws -> Admission {
        let (now, window, allowed) = (self.now, self.window, self.allowed)
        return try await records.write { db in
            let attempts = try await SignInFailureStore.recent(db, address, since: now - window)
            if let wait = SignInWindow.retryAfter(attempts, allowed: allowed, window: window, now: now) { return .refused(retryAfterSeconds: wait) }
            try await SignInFailureStore.record(db, address, now: now, forgetting: now - window)
            return .admitted(at: now)
        }
    }

    /// An admitted attempt that turned out not to be a try of a token (an expired form).
    func forget(_ address: [UInt8], at: Int64) async throws {
        try await records.write { try await SignInFailureStore.forget($0, address, at: at) }
    }
}
