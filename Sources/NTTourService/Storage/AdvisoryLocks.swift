import Dispatch
import NTHashing
import NTPostgresDB
import Synchronization
import NTThreadPools

/// PostgreSQL advisory locks of this daemon: how several daemons on one database take turns
/// with one thing (an upload's partial file, a panorama's name). Held on one connection of the
/// daemon's own, on a thread of its own; a lock goes with its connection, so a daemon that
/// died lets go of all of its locks.
final class AdvisoryLocks: Sendable {
    private let url: String
    /// The thread the lock connection is used on (and where work that must answer a lock
    /// request promptly can run).
    let thread = ThreadPool(name: "advisory-locks", threads: 1)
    private let connection = Mutex<PostgresConnection?>(nil)
    /// Told when the connection broke: every lock it held is gone.
    private let lostHandlers = Mutex<[@Sendable () async -> Void]>([])

    init(url: String) {
        self.url = url
    }

    func stop() { thread.stop() }

    /// `handler` runs whenever the connection holding the locks broke (a database restart, a
    /// network fault): from then on another daemon may take any of them.
    func whenLost(_ handler: @escaping @Sendable () async -> Void) {
        lostHandlers.withLock { $0.append(handler) }
    }

    /// Looks whether the server closed the lock connection (no round trip: called often);
    /// when it did, the locks are reported lost.
    func watch() async {
        let broke = (try? await thread.run { [self] () -> Bool in
            connection.withLock { current in
                guard let held = current, held.closedByServer else { return false }
                current = nil
                return true
            }
        }) ?? false
        if broke { await reportLost() }
    }

    private func reportLost() async {
        for handler in lostHandlers.withLock({ $0 }) { await handler() }
    }

    /// A lock's key: 64 bits of the SHA-256 of its name.
    static func key(_ name: String) -> Int64 {
        StreamingDigest.hash(.sha256, Array(name.utf8)).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    /// Takes lock `name` if no other daemon holds it (a lock is re-entrant for this daemon:
    /// its callers settle among themselves first).
    func tryLock(_ name: String) async throws -> Bool {
        let key = Self.key(name)
        return try await onConnection { try $0.first("SELECT pg_try_advisory_lock(?) AS taken", key)?.decode("taken", as: Int.self) == 1 }
    }

    /// Takes lock `name`, trying again every 20 ms for up to `waitSeconds` (then 503 with
    /// `busy`); `whileWaiting` runs between the tries, with their count.
    func lock(_ name: String, waitSeconds: Double, busy: String, whileWaiting: (Int) async throws -> Void = { _ in }) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(waitSeconds * 1000))
        var tries = 0
        while try await !tryLock(name) {
            try await whileWaiting(tries)
            tries += 1
            guard ContinuousClock.now < deadline else { throw StorageError(.unavailable, busy, retryAfterSeconds: 1) }
            await Self.pause(milliseconds: 20)
        }
    }

    func unlock(_ name: String) async throws {
        let key = Self.key(name)
        _ = try await onConnection { try $0.query("SELECT pg_advisory_unlock(?)", key) }
    }

    func notify(_ channel: String, _ payload: String) async throws {
        _ = try await onConnection { try $0.query("SELECT pg_notify(?, ?)", channel, payload) }
    }

    /// Resumes the caller after a while, holding no thread meanwhile (a timer, not a wait).
    private static func pause(milliseconds: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { continuation.resume() }
        }
    }

    private func onConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let (outcome, broke) = try await thread.run { [self] () throws -> (Result<T, any Error>, Bool) in
            let current = try held()
            do {
                return (.success(try body(current)), false)
            } catch {
                guard current.isBroken else { return (.failure(error), false) }
                // The locks went with the connection; the next use makes a new one.
                let broken = ObjectIdentifier(current)
                connection.withLock { if let held = $0, ObjectIdentifier(held) == broken { $0 = nil } }
                return (.failure(error), true)
            }
        }
        guard broke else { return try outcome.get() }
        await reportLost()
        // What was asked never happened on the dead connection: once more on a new one.
        return try await thread.run { [self] in try body(try held()) }
    }

    /// The lock connection, made when there is none (on `thread`).
    private func held() throws -> PostgresConnection {
        try connection.withLock { current -> PostgresConnection in
            if let current { return current }
            let made = try PostgresConnection(url: url)
            current = made
            return made
        }
    }
}
