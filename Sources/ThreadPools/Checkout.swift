import Synchronization

/// A fixed set of resources (database connections) lent to one holder at a time: `take`
/// waits, in order of arrival, while every one is out; `giveBack` hands it to the next
/// waiting holder, or keeps it.
public final class Checkout<Item: Sendable>: Sendable {
    private struct Shelf {
        var free: [Item]
        var waiting: [CheckedContinuation<Item, Never>] = []
    }

    private let shelf: Mutex<Shelf>

    public init(_ items: [Item]) {
        shelf = Mutex(Shelf(free: items))
    }

    public func take() async -> Item {
        if let item = shelf.withLock({ $0.free.popLast() }) { return item }
        return await withCheckedContinuation { continuation in
            let item = shelf.withLock { shelf -> Item? in
                if let item = shelf.free.popLast() { return item }
                shelf.waiting.append(continuation)
                return nil
            }
            if let item { continuation.resume(returning: item) }
        }
    }

    public func giveBack(_ item: Item) {
        let next = shelf.withLock { shelf -> CheckedContinuation<Item, Never>? in
            guard !shelf.waiting.isEmpty else {
                shelf.free.append(item)
                return nil
            }
            return shelf.waiting.removeFirst()
        }
        next?.resume(returning: item)
    }

    /// Runs `body` with an item taken for it, given back however `body` ends.
    public func with<T>(_ body: (Item) async throws -> T) async throws -> T {
        let item = await take()
        defer { giveBack(item) }
        return try await body(item)
    }
}
