import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// Browsers signed in to /app with a tenant token: their sessions started, found by cookie,
/// and ended. Only a cookie's hash is stored. Knows no HTTP.
package struct ViewerSessions: Sendable {
    package let records: Records
    package let clock: any ServiceClock
    /// How long a session lasts (`sessionLifetimeSeconds`).
    package let lifetime: Int

    package init(records: Records, clock: any ServiceClock, lifetime: Int) {
        self.records = records
        self.clock = clock
        self.lifetime = lifetime
    }

    func session(cookie: String) async throws -> ViewerSession? {
        let now = clock.now()
        return try await records.readOne { try await ViewerStore.session($0, cookie: cookie, at: now) }
    }

    /// A session for the tenant of `token`: its cookie's value; nil when the token is not a
    /// tenant's (revoked, or never one). A success forgets its own admitted attempt
    /// (`SignInLimiter`), in the transaction that starts the session; failures stay counted.
    func signIn(token: String, from address: [UInt8], attempt: Int64) async throws -> String? {
        guard let signedIn = try await records.readOne({ try await TenantStore.signIn(token, $0) }) else { return nil }
        let (lifetime, now) = (lifetime, clock.now())
        return try await records.write { db in
            try await SignInFailureStore.forget(db, address, at: attempt)
            return try await ViewerStore.startSession(db, tenant: signedIn.tenant, tokenId: signedIn.tokenId, lifetime: lifetime, at: now)
        }
    }

    func end(cookie: String) async throws {
        try await records.write { try await ViewerStore.endSession($0, cookie: cookie) }
    }
}
