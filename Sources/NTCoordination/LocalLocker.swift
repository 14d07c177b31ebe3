import Dispatch
import NTSQLKit
import Synchronization

/// The locker of one daemon (and the in-process half of a shared one): per name, its holder
/// and the callers waiting in order of arrival; an unlock hands the lock to the first waiter.
/// A waiter is resumed by that hand-over or by a timer at its deadline.
public final class LocalLocker: Locker {
    private struct Waiter {
        let id: UInt64
        let holder: LockHolder
        let continuation: CheckedContinuation<HeldLock?, Never>
    }

    private struct Entry {
        var holding: HeldLock
        var waiting: [Waiter] = []
    }

    private let entries = Mutex<[LockName: Entry]>([:])
    private let waiterIDs = Atomic<UInt64>(0)

    public init() {}

    public var spansDaemons: Bool { false }

    public func stop() {}

    public func lock(_ name: LockName, wait: LockWait, holder: LockHolder) async throws -> HeldLock {
        let id = waiterIDs.add(1, ordering: .relaxed).newValue
        let taken = await withCheckedContinuation { (continuation: CheckedContinuation<HeldLock?, Never>) in
            let outcome = entries.withLock { entries -> (taken: HeldLock?, ask: LockHolder?) in
                guard let current = entries[name] else {
                    let held = HeldLock(name, holder)
                    entries[name] = Entry(holding: held)
                    return (held, nil)
                }
                entries[name]!.waiting.append(Waiter(id: id, holder: holder, continuation: continuation))
                return (nil, wait.askHolder ? current.holding.holder : nil)
            }
            if let taken = outcome.taken { return continuation.resume(returning: taken) }
            if let ask = outcome.ask?.unlockRequested { Task { await ask() } }
            if let seconds = wait.seconds {
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in giveUp(name, id) }
            }
        }
        guard let taken else { throw wait.refusal }
        return taken
    }

    public func tryLock(_ name: LockName, holder: LockHolder) async throws -> HeldLock? {
        entries.withLock { entries in
            guard entries[name] == nil else { return nil }
            let held = HeldLock(name, holder)
            entries[name] = Entry(holding: held)
            return held
        }
    }

    public func unlock(_ held: HeldLock) async {
        guard held.end() else { return }
        let next = entries.withLock { entries -> (Waiter, HeldLock)? in
            guard var entry = entries[held.name], entry.holding === held else { return nil }
            guard !entry.waiting.isEmpty else {
                entries[held.name] = nil
                return nil
            }
            let waiter = entry.waiting.removeFirst()
            entry.holding = HeldLock(held.name, waiter.holder)
            entries[held.name] = entry
            return (waiter, entry.holding)
        }
        if let (waiter, lock) = next { waiter.continuation.resume(returning: lock) }
    }

    /// A waiter's time is up: it leaves the line (unless the lock was handed to it meanwhile).
    private func giveUp(_ name: LockName, _ id: UInt64) {
        let waiter = entries.withLock { entries -> Waiter? in
            guard let index = entries[name]?.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return entries[name]!.waiting.remove(at: index)
        }
        waiter?.continuation.resume(returning: nil)
    }
}
