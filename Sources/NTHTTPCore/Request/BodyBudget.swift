import Synchronization

/// The memory all request bodies of a server may hold between their sockets and their
/// handlers: bytes read and not yet taken, and the batch each handler is writing. A
/// connection whose body would go past it stops reading that socket (TCP then holds the
/// client back) until handlers release bytes; so memory stays bounded however many uploads
/// arrive at once, and it is shared out by who frees first.
final class BodyBudget: Sendable {
    private struct State {
        var used = 0
        /// Connections paused for the budget, told when it has room again.
        var waiters: [@Sendable () -> Void] = []
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    var used: Int { state.withLock { $0.used } }

    /// Counts bytes a stream now holds; returns whether there is room for more.
    func take(_ count: Int) -> Bool {
        state.withLock { state in
            state.used += count
            return state.used < limit
        }
    }

    /// Whether there is room; when not, `wake` is called once there is.
    func hasRoom(orWake wake: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.used >= limit else { return true }
            state.waiters.append(wake)
            return false
        }
    }

    /// Bytes a stream no longer holds. Paused connections are woken once there is room again.
    func release(_ count: Int) {
        guard count > 0 else { return }
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            state.used -= count
            guard state.used < limit, !state.waiters.isEmpty else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for wake in waiters { wake() }
    }
}
