import NTCoordination
import NTLogging
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import Synchronization

/// Which daemon writes an upload's partial file: the one holding the upload's lock in the
/// deployment's `Locker`. The PATCHes of one daemon share its hold (its sessions settle among
/// them: a newer PATCH takes over at once). A newer PATCH at another daemon asks the holder to
/// let go: the holder ends its session (its writes done, a finish under way completed), lets
/// go, and the newer PATCH proceeds from the offset the database records. A lock lost with its
/// connection ends this daemon's writer of the upload the same way.
package final class UploadOwnership: Sendable {
    /// Ends this daemon's session of an upload once no finish of it is under way, waits for
    /// its writes, and runs `letGo` before any session of it can open again.
    package typealias Yield = @Sendable (_ key: BlobKey, _ letGo: @Sendable () async -> Void) async -> Void

    private let locker: any Locker
    private let waitSeconds: Double
    private let logger: Logger
    private let yieldUpload: Yield
    /// This daemon's hold of each upload: the lock, and the PATCHes sharing it (by token).
    /// A hold goes before its lock is let go, so a lock is free only while no hold names it.
    private let holds = Mutex<[BlobKey: (lock: HeldLock, tokens: Set<UInt64>)]>([:])
    private let tokens = Atomic<UInt64>(0)

    package init(locker: any Locker, waitSeconds: Double, logger: Logger, yieldUpload: @escaping Yield) {
        self.locker = locker
        self.waitSeconds = waitSeconds
        self.logger = logger
        self.yieldUpload = yieldUpload
    }

    /// Whether other daemons may take an upload over (they continue from what is recorded).
    var spansDaemons: Bool { locker.spansDaemons }

    /// The upload's lock name (what other daemons ask to be let go of).
    static func lockName(_ key: BlobKey) -> LockName { LockName("\(key.tenant)/\(key.id)", reach: .deployment) }

    /// Makes this daemon the upload's writer (asking another daemon writing it to stop, and
    /// waiting up to `uploadTakeoverSeconds`); returns a token for `release`.
    func acquire(_ key: BlobKey) async throws -> UInt64 {
        let wait = LockWait(seconds: waitSeconds, busy: "another daemon still writes upload \(key.id); try again", askHolder: true)
        guard let token = try await take(key, lock: { [locker] holder in try await locker.lock(Self.lockName(key), wait: wait, holder: holder) }) else {
            throw wait.refusal // `lock` takes the lock or throws: not reached
        }
        return token
    }

    /// `acquire` when no other daemon writes the upload now; nil (at once) when one does.
    func tryAcquire(_ key: BlobKey) async throws -> UInt64? {
        try await take(key) { [locker] holder in try await locker.tryLock(Self.lockName(key), holder: holder) }
    }

    /// A token for the upload: at once when a PATCH of this daemon holds it, else once `lock`
    /// took its lock (nil: it did not).
    private func take(_ key: BlobKey, lock: (LockHolder) async throws -> HeldLock?) async throws -> UInt64? {
        let token = tokens.add(1, ordering: .relaxed).newValue
        let heldHere = holds.withLock { holds -> Bool in
            guard holds[key] != nil else { return false }
            holds[key]!.tokens.insert(token)
            return true
        }
        if heldHere { return token }
        // What the locker tells the holder between taking the lock and the hold's being
        // registered here would find no hold: it is kept, and acted on once there is one.
        let early = EarlyNews()
        let holder = LockHolder(unlockRequested: { [weak self] in
                                    early.asked.store(true, ordering: .sequentiallyConsistent)
                                    await self?.yield(key)
                                },
                                lost: { [weak self] in
                                    early.lost.store(true, ordering: .sequentiallyConsistent)
                                    await self?.lost(key)
                                })
        guard let lock = try await lock(holder) else { return nil }
        holds.withLock { $0[key] = (lock, [token]) }
        if early.lost.load(ordering: .sequentiallyConsistent) {
            Task { await self.lost(key) }
        } else if early.asked.load(ordering: .sequentiallyConsistent) {
            Task { await self.yield(key) }
        }
        return token
    }

    func release(_ key: BlobKey, _ token: UInt64) async {
        let last = holds.withLock { holds -> HeldLock? in
            guard holds[key]?.tokens.remove(token) != nil, holds[key]?.tokens.isEmpty == true else { return nil }
            return holds.removeValue(forKey: key)?.lock
        }
        if let last { await locker.unlock(last) }
    }

    /// Whether `token` still makes this daemon the upload's writer (another daemon may have
    /// taken the upload since).
    func holds(_ key: BlobKey, _ token: UInt64) -> Bool {
        holds.withLock { $0[key]?.tokens.contains(token) == true }
    }

    /// A request to let go, or the loss of the lock, told before the hold was registered.
    private final class EarlyNews: Sendable {
        let asked = Atomic<Bool>(false)
        let lost = Atomic<Bool>(false)
    }

    /// Another daemon asked for the upload: this daemon's session ends, then the lock goes.
    private func yield(_ key: BlobKey) async {
        guard holds.withLock({ $0[key] != nil }) else { return }
        logger.info("another daemon asks for an upload this one writes; its writer stops", ["upload": key.id])
        await yieldUpload(key) {
            let lock = self.holds.withLock { $0.removeValue(forKey: key)?.lock }
            if let lock { await self.locker.unlock(lock) }
        }
    }

    /// The lock went with its database connection (the database restarted): another daemon
    /// may take the upload now, so this daemon's writer stops; its client resumes from the
    /// offset the database records.
    private func lost(_ key: BlobKey) async {
        let lock = holds.withLock { $0.removeValue(forKey: key)?.lock }
        guard let lock else { return }
        logger.warn("an upload's lock went with its database connection; its writer stops", ["upload": key.id])
        await yieldUpload(key) {}
        await locker.unlock(lock) // its local turn: the database's is gone already
    }
}
