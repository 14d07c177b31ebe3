import NTSQLKit
import Synchronization

/// Who may act on a thing now: one holder per name at a time, within this daemon and, when
/// several daemons share a deployment, across them (tusd's `Locker`). A holder can be asked to
/// let go (`LockHolder.unlockRequested`: a newer request for the thing arrived) and is told
/// when the lock went without its letting go (`LockHolder.lost`: the database connection that
/// held it broke, so another daemon may take it now). Waiting is suspended: no thread is held
/// and nothing polls.
public protocol Locker: Sendable {
    /// Whether other daemons take these names too (what one of them wrote is read from the
    /// records, not from this daemon's memory).
    var spansDaemons: Bool { get }

    /// Takes `name`, waiting while another holds it for at most `wait`'s seconds; then throws
    /// `StorageError.unavailable` with `wait.busy`. With `wait.askHolder`, the holder is asked
    /// to let go first.
    func lock(_ name: LockName, wait: LockWait, holder: LockHolder) async throws -> HeldLock

    /// Takes `name` when nobody holds it; nil at once when somebody does.
    func tryLock(_ name: LockName, holder: LockHolder) async throws -> HeldLock?

    /// Lets go of `held` (nothing when it was lost or let go already); the next waiter gets it.
    func unlock(_ held: HeldLock) async

    /// Ends what the locker runs of its own (a connection, its thread).
    func stop()
}

/// A lock's name, and how far it reaches.
public struct LockName: Hashable, Sendable, CustomStringConvertible {
    public enum Reach: Hashable, Sendable {
        /// Among this daemon's tasks only (what no other daemon touches: a session in memory).
        case daemon
        /// Among every daemon of the deployment.
        case deployment
    }

    public let text: String
    public let reach: Reach

    public init(_ text: String, reach: Reach) {
        self.text = text
        self.reach = reach
    }

    public var description: String { text }
}

/// How long a lock is waited for, and the words of the refusal when the time is up.
public struct LockWait: Sendable {
    /// nil: for as long as it takes (a holder whose work is bounded by other limits).
    public let seconds: Double?
    public let busy: String
    /// Asks the holder to let go (its `unlockRequested` runs) before waiting.
    public let askHolder: Bool

    public init(seconds: Double?, busy: String, askHolder: Bool = false) {
        self.seconds = seconds
        self.busy = busy
        self.askHolder = askHolder
    }

    /// For as long as it takes.
    public static let untilFree = LockWait(seconds: nil, busy: "")

    /// The refusal when the time is up: the holder may be done soon, so asking again can work.
    public var refusal: StorageError { StorageError(.unavailable, busy, retryAfterSeconds: 1) }
}

/// What a holder is told while it holds a lock.
public struct LockHolder: Sendable {
    /// Another caller asks for the lock (a newer request): the holder winds up and unlocks.
    public let unlockRequested: (@Sendable () async -> Void)?
    /// The lock went without an unlock (its connection broke): another daemon may hold it now.
    public let lost: (@Sendable () async -> Void)?

    public init(unlockRequested: (@Sendable () async -> Void)? = nil, lost: (@Sendable () async -> Void)? = nil) {
        self.unlockRequested = unlockRequested
        self.lost = lost
    }

    public static let quiet = LockHolder()
}

/// A lock taken, until it is let go (once: a second unlock of it does nothing).
public final class HeldLock: Sendable {
    public let name: LockName
    /// What its holder is told (a shared locker tells it what other daemons ask).
    public let holder: LockHolder
    private let held = Atomic<Bool>(true)

    init(_ name: LockName, _ holder: LockHolder) {
        self.name = name
        self.holder = holder
    }

    /// Marks it let go; true for the one call that did.
    func end() -> Bool { held.exchange(false, ordering: .acquiringAndReleasing) }
}

extension Locker {
    /// Runs `body` holding every name of `names`, taken one by one in one order (by text) in
    /// every daemon, so that callers holding several cannot deadlock each other.
    public func withLocks<T>(_ names: [LockName], wait: LockWait, _ body: () async throws -> T) async throws -> T {
        var held: [HeldLock] = []
        do {
            for name in Set(names).sorted(by: { $0.text < $1.text }) { held.append(try await lock(name, wait: wait, holder: .quiet)) }
            let value = try await body()
            for lock in held.reversed() { await unlock(lock) }
            return value
        } catch {
            for lock in held.reversed() { await unlock(lock) }
            throw error
        }
    }
}
