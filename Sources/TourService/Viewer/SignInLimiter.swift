import Foundation
import SQLKit

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

/// `SignInWindow` over the failures recorded in the database, so that every daemon sharing it
/// applies one limit (behind a balancer of N daemons a client would otherwise get N times the
/// tries), and a restart forgets none. The clock is the wall clock, which daemons share. A
/// successful sign-in clears the address's failures (`SignInFailureStore.clear`, in the
/// transaction that starts its session).
struct SignInLimiter: Sendable {
    let pool: any SQLStorage
    let allowed: Int
    let window: Int64

    init(pool: any SQLStorage, allowed: Int, window: Int) {
        self.pool = pool
        self.allowed = allowed
        self.window = Int64(window)
    }

    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    func retryAfter(_ address: [UInt8]) async throws -> Int? {
        let (now, window, allowed) = (self.now, self.window, self.allowed)
        let failures = try await pool.read { try SignInFailureStore.recent($0, address, since: now - window) }
        return SignInWindow.retryAfter(failures, allowed: allowed, window: window, now: now)
    }

    func recordFailure(_ address: [UInt8]) async throws {
        let (now, window) = (self.now, self.window)
        try await pool.write { try SignInFailureStore.record($0, address, now: now, forgetting: now - window) }
    }
}
