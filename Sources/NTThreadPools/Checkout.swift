import Synchronization

/// A fixed number of resources (database connections, by index) lent to one holder at a time.
/// A holder that prefers one (a reader thread its own connection) takes it without a lock
/// when it is free; else any free one; while all are out, `take` waits, in order of arrival,
/// and `giveBack` hands the resource to the next waiter.
public final class Checkout: Sendable {
    private final class Slot: Sendable {
        let busy = Atomic<Bool>(false)
    }

    private let slots: [Slot]
    /// Waiters, counted outside the lock so that a give-back with nobody waiting takes none.
    private let waiting = Atomic<Int>(0)
    private let waiters = Mutex<[CheckedContinuation<Int, Never>]>([])

    public init(count: Int) {
        slots = (0..<max(1, count)).map { _ in Slot() }
    }

    public var count: Int { slots.count }
    /// Resources lent now, and holders waiting for one (/metrics; a moment's reading).
    public var lent: Int { slots.count { $0.busy.load(ordering: .relaxed) } }
    public var waitingHolders: Int { waiting.load(ordering: .relaxed) }

    /// A free resource's index, `preferred` first.
    public func take(preferring preferred: Int? = nil) async -> Int {
        if let index = grab(preferring: preferred) { return index }
        return await withCheckedContinuation { continuation in
            let index = waiters.withLock { waiters -> Int? in
                // Counted first, then looked again: a give-back after the look sees the count.
                waiting.add(1, ordering: .sequentiallyConsistent)
                if let index = grab(preferring: preferred) {
                    waiting.subtract(1, ordering: .sequentiallyConsistent)
                    return index
                }
                waiters.append(continuation)
                return nil
            }
            if let index { continuation.resume(returning: index) }
        }
    }

    public func giveBack(_ index: Int) {
        slots[index].busy.store(false, ordering: .sequentiallyConsistent)
        guard waiting.load(ordering: .sequentiallyConsistent) > 0 else { return }
        let handed = waiters.withLock { waiters -> CheckedContinuation<Int, Never>? in
            guard !waiters.isEmpty, grab(preferring: index) == index else { return nil }
            waiting.subtract(1, ordering: .sequentiallyConsistent)
            return waiters.removeFirst()
        }
        handed?.resume(returning: index)
    }

    /// Runs `body` with a resource taken for it, given back however `body` ends.
    public func with<T>(preferring preferred: Int? = nil, _ body: (Int) async throws -> T) async throws -> T {
        let index = await take(preferring: preferred)
        defer { giveBack(index) }
        return try await body(index)
    }

    private func grab(preferring preferred: Int?) -> Int? {
        if let preferred, preferred < slots.count, claim(preferred) { return preferred }
        return slots.indices.first { claim($0) }
    }

    private func claim(_ index: Int) -> Bool {
        slots[index].busy.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
    }
}
