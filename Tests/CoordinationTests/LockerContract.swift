import NTCoordination
import NTSQLKit
import Synchronization
import Testing

/// What every `Locker` adapter promises, run on each (`LocalLockerTests`,
/// `PostgresLockerTests`): one holder per name, waiters served when it lets go, a holder asked
/// to let go, a wait that ends with the refusal at its time, several names taken without
/// deadlock.
struct LockerContract: Sendable {
    enum Promise: String, CaseIterable, CustomTestStringConvertible {
        case oneHolderAndTheWaiterAfterIt
        case tryLockTakesOnlyAFreeName
        case aWaitEndsWithItsRefusal
        case namesAreIndependent
        case severalNamesWithoutDeadlock
        case anUnlockTwiceIsHarmless

        var testDescription: String { rawValue }
    }

    let locker: any Locker
    let reach: LockName.Reach

    func name(_ text: String) -> LockName { LockName("contract/\(text)", reach: reach) }

    func check(_ promise: Promise) async throws {
        switch promise {
        case .oneHolderAndTheWaiterAfterIt: try await oneHolderAndTheWaiterAfterIt()
        case .tryLockTakesOnlyAFreeName: try await tryLockTakesOnlyAFreeName()
        case .aWaitEndsWithItsRefusal: try await aWaitEndsWithItsRefusal()
        case .namesAreIndependent: try await namesAreIndependent()
        case .severalNamesWithoutDeadlock: try await severalNamesWithoutDeadlock()
        case .anUnlockTwiceIsHarmless: try await anUnlockTwiceIsHarmless()
        }
    }

    /// A waiter that asks is queued before the holder hears it, and gets the lock only after
    /// the holder let go.
    private func oneHolderAndTheWaiterAfterIt() async throws {
        let log = Log()
        let asked = AsyncStream<Void>.makeStream()
        let first = try await locker.lock(name("one"), wait: .untilFree, holder: LockHolder(unlockRequested: { asked.continuation.yield() }))
        let waiter = Task {
            let held = try await locker.lock(name("one"), wait: LockWait(seconds: 30, busy: "busy", askHolder: true), holder: .quiet)
            log.add("second holds")
            await locker.unlock(held)
        }
        var requests = asked.stream.makeAsyncIterator()
        _ = await requests.next()
        log.add("first asked to let go")
        #expect(try await locker.tryLock(name("one"), holder: .quiet) == nil) // still the first's
        log.add("first lets go")
        await locker.unlock(first)
        try await waiter.value
        #expect(log.entries == ["first asked to let go", "first lets go", "second holds"])
    }

    private func tryLockTakesOnlyAFreeName() async throws {
        let held = try #require(try await locker.tryLock(name("try"), holder: .quiet))
        #expect(try await locker.tryLock(name("try"), holder: .quiet) == nil)
        await locker.unlock(held)
        let again = try #require(try await locker.tryLock(name("try"), holder: .quiet))
        await locker.unlock(again)
    }

    /// Past its time a wait is refused as `unavailable` with its words; the holder keeps it.
    private func aWaitEndsWithItsRefusal() async throws {
        let held = try await locker.lock(name("wait"), wait: .untilFree, holder: .quiet)
        let started = ContinuousClock.now
        await #expect(throws: StorageError(.unavailable, "another holds it", retryAfterSeconds: 1)) {
            _ = try await locker.lock(name("wait"), wait: LockWait(seconds: 0.3, busy: "another holds it"), holder: .quiet)
        }
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(try await locker.tryLock(name("wait"), holder: .quiet) == nil)
        await locker.unlock(held)
        let after = try await locker.lock(name("wait"), wait: LockWait(seconds: 5, busy: "busy"), holder: .quiet)
        await locker.unlock(after)
    }

    private func namesAreIndependent() async throws {
        let x = try await locker.lock(name("x"), wait: .untilFree, holder: .quiet)
        let y = try await locker.lock(name("y"), wait: LockWait(seconds: 5, busy: "busy"), holder: .quiet)
        await locker.unlock(x)
        await locker.unlock(y)
    }

    /// Tasks taking the same names in opposite orders all finish, one holder at a time.
    private func severalNamesWithoutDeadlock() async throws {
        let holders = Holders()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    let names = task.isMultiple(of: 2) ? [name("a"), name("b")] : [name("b"), name("a")]
                    for _ in 0..<10 {
                        try await locker.withLocks(names, wait: LockWait(seconds: 30, busy: "busy")) {
                            holders.enter()
                            await Task.yield()
                            holders.leave()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(holders.overlaps == 0)
    }

    private func anUnlockTwiceIsHarmless() async throws {
        let held = try await locker.lock(name("twice"), wait: .untilFree, holder: .quiet)
        await locker.unlock(held)
        let next = try await locker.lock(name("twice"), wait: LockWait(seconds: 5, busy: "busy"), holder: .quiet)
        await locker.unlock(held) // the old one again: the new holder keeps it
        #expect(try await locker.tryLock(name("twice"), holder: .quiet) == nil)
        await locker.unlock(next)
    }
}

/// What happened, in order, across tasks.
final class Log: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var entries: [String] { lines.withLock { $0 } }
}

/// How many hold at once: `overlaps` counts the entries that found another inside.
final class Holders: Sendable {
    private let state = Mutex((inside: 0, overlaps: 0))
    func enter() { state.withLock { $0.inside += 1; if $0.inside > 1 { $0.overlaps += 1 } } }
    func leave() { state.withLock { $0.inside -= 1 } }
    var overlaps: Int { state.withLock { $0.overlaps } }
}

@Suite struct LocalLockerTests {
    @Test(arguments: LockerContract.Promise.allCases)
    func keeps(_ promise: LockerContract.Promise) async throws {
        try await LockerContract(locker: LocalLocker(), reach: .deployment).check(promise)
    }
}
