import Synchronization

/// One holder per key at a time; the others wait their turn in order, suspended (no thread
/// blocks). For steps that must not run twice at once for the same thing, across requests.
/// Its place in the lock order is `level` (checked in debug builds).
final class AsyncKeyedLock<Key: Hashable & Sendable>: Sendable {
    /// The keys held, each with the callers waiting for it.
    private let held = Mutex<[Key: [CheckedContinuation<Void, Never>]]>([:])
    let level: LockLevel

    init(level: LockLevel) {
        self.level = level
    }

    func withLock<T>(_ key: Key, _ body: () async throws -> T) async throws -> T {
        try await LockOrder.entering(level) {
            await acquire(key)
            defer { release(key) }
            return try await body()
        }
    }

    /// Holds every key of `keys` at once, taken one by one in one order (callers that hold
    /// one key at a time cannot deadlock with it).
    func withLocks<T>(_ keys: [Key], by order: (Key, Key) -> Bool, _ body: () async throws -> T) async throws -> T {
        try await LockOrder.entering(level) {
            let sorted = Array(Set(keys)).sorted(by: order)
            for key in sorted { await acquire(key) }
            defer { for key in sorted { release(key) } }
            return try await body()
        }
    }

    private func acquire(_ key: Key) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free = held.withLock { held -> Bool in
                guard held[key] != nil else {
                    held[key] = []
                    return true
                }
                held[key]!.append(continuation)
                return false
            }
            if free { continuation.resume() }
        }
    }

    private func release(_ key: Key) {
        let next = held.withLock { held -> CheckedContinuation<Void, Never>? in
            guard var waiting = held[key], !waiting.isEmpty else {
                held[key] = nil
                return nil
            }
            let next = waiting.removeFirst()
            held[key] = waiting
            return next
        }
        next?.resume()
    }
}
