import NTCoordination
import NTHashing
import NTSQLKit
import Synchronization
import NTThreadPools

/// The locker of several daemons on one PostgreSQL: a name is taken first among this daemon's
/// tasks (`LocalLocker`), then across daemons as an advisory lock of this daemon's session.
///
/// - The session is one connection, driven in pipeline mode by a thread of the locker's own:
///   it holds the daemon's advisory locks and LISTENs for requests to let go of one, so a
///   request can only be missed when the connection broke, and then the locks went with it
///   (every holder is told `lost`). A daemon that dies lets go of all its locks the same way.
/// - A caller that finds a name taken waits on a connection of its own: it asks for the lock
///   shared and lets go of it at once, so the server answers when the holder unlocks or its
///   session ends, and `lock_timeout` bounds the wait. Then it tries again; no thread blocks
///   and nothing polls.
public final class PostgresLocker: Locker {
    static let unlockChannel = "toursd_unlock_requested"
    private static let session = 0

    private let local = LocalLocker()
    private let connections: PipelinedConnections
    /// The waiting connections (1..., after the session), lent one per waiting caller.
    private let waits: Checkout
    /// How many times the session connection ended: a lock taken on an earlier one is gone.
    private let sessions = Atomic<UInt64>(0)
    /// The locks this daemon's session holds (one holder per name: the local turn), with the
    /// session each was taken on.
    private let heldInDatabase = Mutex<[LockName: (lock: HeldLock, session: UInt64)]>([:])
    private let stopping = Atomic<Bool>(false)
    /// A wait is cut short of the statement timeout, which would end its connection.
    private let longestWaitSeconds: Double

    /// `waitConnections`: how many callers may wait for other daemons' locks at once (more
    /// wait for a connection).
    public init(url: String, waitConnections: Int, statementTimeoutSeconds: Int) {
        let waiting = max(1, waitConnections)
        waits = Checkout(count: waiting)
        longestWaitSeconds = Double(max(1, statementTimeoutSeconds - 1))
        let events = SessionEvents()
        connections = PipelinedConnections(url: PostgresConnection.bounded(url, connectTimeoutSeconds: 5), name: "locks", threadCount: 1,
                                           modes: Array(repeating: .shared, count: 1 + waiting), statementTimeoutSeconds: statementTimeoutSeconds,
                                           batches: Counter(), setup: { $0 == Self.session ? ["LISTEN \(Self.unlockChannel)"] : [] },
                                           sessionEvents: { events.tell($0) })
        events.listener = self
    }

    public var spansDaemons: Bool { true }

    public func stop() {
        stopping.store(true, ordering: .relaxed)
        connections.stop()
    }

    /// A lock's key in the database: 64 bits of the SHA-256 of its name.
    static func key(_ name: LockName) -> Int64 {
        StreamingDigest.hash(.sha256, Array(name.text.utf8)).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    public func lock(_ name: LockName, wait: LockWait, holder: LockHolder) async throws -> HeldLock {
        let deadline = wait.seconds.map { ContinuousClock.now + .milliseconds(Int($0 * 1000)) }
        let turn = try await local.lock(name, wait: wait, holder: holder)
        guard name.reach == .deployment else { return turn }
        do {
            var asked = false
            while true {
                if try await takeInDatabase(turn) { return turn }
                if wait.askHolder, !asked {
                    _ = try await onSession(SQLStatement("SELECT pg_notify(?, ?)", Self.unlockChannel, name.text))
                    asked = true
                }
                if let deadline, deadline <= ContinuousClock.now { throw wait.refusal }
                try await awaitRelease(name, until: deadline, wait)
            }
        } catch {
            await local.unlock(turn)
            throw error
        }
    }

    public func tryLock(_ name: LockName, holder: LockHolder) async throws -> HeldLock? {
        guard let turn = try await local.tryLock(name, holder: holder) else { return nil }
        guard name.reach == .deployment else { return turn }
        do {
            if try await takeInDatabase(turn) { return turn }
        } catch {
            await local.unlock(turn)
            throw error
        }
        await local.unlock(turn)
        return nil
    }

    public func unlock(_ held: HeldLock) async {
        let session = heldInDatabase.withLock { locks in
            locks[held.name]?.lock === held ? locks.removeValue(forKey: held.name)?.session : nil
        }
        // On a session that ended, the lock went with it.
        if let session, session == sessions.load(ordering: .acquiring) {
            _ = try? await onSession(SQLStatement("SELECT pg_advisory_unlock(?)", Self.key(held.name)))
        }
        await local.unlock(held)
    }

    /// Takes the advisory lock of `turn`'s name if no other daemon holds it. Taken on a session
    /// that ended before the answer came, it is gone: asked again on the next.
    private func takeInDatabase(_ turn: HeldLock) async throws -> Bool {
        while true {
            let session = sessions.load(ordering: .acquiring)
            let answer = try await onSession(SQLStatement("SELECT pg_try_advisory_lock(?) AS taken", Self.key(turn.name)))
            guard try answer.allRows.first?.decode("taken", as: Int.self) == 1 else { return false }
            let kept = heldInDatabase.withLock { held -> Bool in
                guard sessions.load(ordering: .acquiring) == session else { return false }
                held[turn.name] = (turn, session)
                return true
            }
            if kept { return true }
        }
    }

    /// Returns once nobody holds `name`'s lock (at that moment), waiting on a connection of its
    /// own until `deadline` (then `wait.refusal`).
    private func awaitRelease(_ name: LockName, until deadline: ContinuousClock.Instant?, _ wait: LockWait) async throws {
        let key = Self.key(name)
        let waiting = await waits.take()
        defer { waits.giveBack(waiting) }
        // Counted from when the connection is this caller's: waiting for one took some of it.
        let left = deadline.map { ContinuousClock.now.duration(to: $0) }
        if let left, left <= .zero { throw wait.refusal }
        let seconds = min(left.map { $0 / .seconds(1) } ?? longestWaitSeconds, longestWaitSeconds)
        do {
            _ = try await connections.ask(connections.place(1 + waiting), [
                SQLStatement("SELECT set_config('lock_timeout', ?, false)", "\(max(1, Int(seconds * 1000)))ms"),
                SQLStatement("SELECT pg_advisory_lock_shared(?)", key),
                SQLStatement("SELECT pg_advisory_unlock_shared(?)", key),
            ])
        } catch let error as PostgresError where error.sqlState == "55P03" {
            // lock_timeout: the holder kept it. Past the caller's time, that is its refusal;
            // short of it (a wait is cut at the statement timeout), the caller looks again.
            if left.map({ $0 <= .seconds(longestWaitSeconds) }) ?? false { throw wait.refusal }
        }
    }

    private func onSession(_ statement: SQLStatement) async throws -> PostgresResult {
        try await connections.ask(connections.place(Self.session), [statement])[0]
    }

    /// What the session connection says: another daemon asks for a lock (its holder here is
    /// asked to let go), or the connection ended (every lock it held is gone).
    fileprivate func heard(_ event: ConnectionSet.SessionEvent) {
        guard !stopping.load(ordering: .relaxed) else { return }
        switch event {
        case .notified(Self.session, Self.unlockChannel, let payload):
            let asked = heldInDatabase.withLock { $0[LockName(payload, reach: .deployment)]?.lock }
            if let request = asked?.holder.unlockRequested { Task { await request() } }
        case .closed(Self.session):
            let lost = heldInDatabase.withLock { held -> [HeldLock] in
                sessions.add(1, ordering: .acquiringAndReleasing)
                defer { held = [:] }
                return held.values.map(\.lock)
            }
            for lock in lost { if let told = lock.holder.lost { Task { await told() } } }
        default:
            break
        }
    }
}

/// Carries the session's events to the locker, which is made after its connections (and is
/// not kept alive by them).
private final class SessionEvents: Sendable {
    private let target = Mutex<PostgresLockerReference?>(nil)

    var listener: PostgresLocker? {
        get { target.withLock { $0?.locker } }
        set { target.withLock { $0 = PostgresLockerReference(locker: newValue) } }
    }

    func tell(_ event: ConnectionSet.SessionEvent) { listener?.heard(event) }
}

private struct PostgresLockerReference: Sendable {
    weak var locker: PostgresLocker?
}
