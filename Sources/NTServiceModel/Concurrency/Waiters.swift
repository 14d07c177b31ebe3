import Synchronization

/// Tasks that wait for something to happen, each for at most a time: `awaitSignal` returns at a
/// signal after its mark, or when its time is up. A signal between the caller's look at its
/// condition and the wait is not missed (the signals are counted, and the mark is taken
/// before the look).
package final class Waiters: Sendable {
    private struct State {
        var signals: UInt64 = 0
        var next: UInt64 = 0
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waits whose time ran out before they were registered.
        var expired: Set<UInt64> = []
    }

    private let state = Mutex(State())

    package init() {}

    package var isEmpty: Bool { state.withLock { $0.waiting.isEmpty } }

    /// Where the signals are now: a wait from this mark returns at once if one came since (the
    /// caller takes it before it looks at what it waits for).
    package func mark() -> UInt64 { state.withLock { $0.signals } }

    /// Wakes every wait under way; how many there were.
    @discardableResult
    package func signal() -> Int {
        let woken = state.withLock { state in
            state.signals &+= 1
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiter in woken { waiter.resume() }
        return woken.count
    }

    /// Returns at once when `ready()` holds, else at the next signal or after `milliseconds`.
    package func awaitSignal(upTo milliseconds: Int, unless ready: () -> Bool) async {
        let mark = mark()
        if ready() { return }
        await awaitSignal(since: mark, upTo: milliseconds)
    }

    /// Returns at once when a signal came since `mark`, else at the next one or after
    /// `milliseconds`.
    package func awaitSignal(since mark: UInt64, upTo milliseconds: Int) async {
        let wait = state.withLock { state -> UInt64 in
            state.next &+= 1
            return state.next
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { state -> Bool in
                        if state.signals != mark || state.expired.remove(wait) != nil { return true }
                        state.waiting[wait] = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
            group.addTask {
                do { try await Task.sleep(for: .milliseconds(milliseconds)) } catch { return } // signalled first
                let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                    if let waiter = state.waiting.removeValue(forKey: wait) { return waiter }
                    state.expired.insert(wait)
                    return nil
                }
                waiter?.resume()
            }
            await group.next()
            group.cancelAll()
        }
        // Both sides have ended: a time that ran out after a signal woke the wait left its mark.
        state.withLock { _ = $0.expired.remove(wait) }
    }

    /// Waits whose time ran out and are still remembered (none once every wait has returned).
    var expiredCount: Int { state.withLock { $0.expired.count } }
}
