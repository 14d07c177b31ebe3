import Synchronization

/// Tasks that wait for something to happen, each for at most a time: `awaitSignal` returns at the
/// next `signal()` after it began, or when its time is up. A signal between the caller's look
/// at its condition and the wait is not missed (the signals are counted).
final class Waiters: Sendable {
    private struct State {
        var signals: UInt64 = 0
        var next: UInt64 = 0
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waits whose time ran out before they were registered.
        var expired: Set<UInt64> = []
    }

    private let state = Mutex(State())

    var isEmpty: Bool { state.withLock { $0.waiting.isEmpty } }

    /// Wakes every wait under way.
    func signal() {
        let woken = state.withLock { state in
            state.signals &+= 1
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Returns at once when `ready()` holds, else at the next signal or after `milliseconds`.
    func awaitSignal(upTo milliseconds: Int, unless ready: () -> Bool) async {
        let (wait, signals) = state.withLock { state -> (UInt64, UInt64) in
            state.next &+= 1
            return (state.next, state.signals)
        }
        if ready() { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { state -> Bool in
                        if state.signals != signals || state.expired.remove(wait) != nil { return true }
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
    }
}
