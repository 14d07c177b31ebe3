import Synchronization

/// Hands each event to every current listener; costs nothing when there is none.
final class SyncEvents: Sendable {
    private let listeners = Mutex<[Int: AsyncStream<SyncEvent>.Continuation]>([:])
    private let counter = Atomic<Int>(0)

    func stream() -> AsyncStream<SyncEvent> {
        let id = counter.wrappingAdd(1, ordering: .relaxed).newValue
        // Progress can outpace a slow reader: the newest events are the ones worth keeping.
        let (stream, continuation) = AsyncStream.makeStream(of: SyncEvent.self, bufferingPolicy: .bufferingNewest(1024))
        continuation.onTermination = { [weak self] _ in self?.listeners.withLock { _ = $0.removeValue(forKey: id) } }
        listeners.withLock { $0[id] = continuation }
        return stream
    }

    var isObserved: Bool { listeners.withLock { !$0.isEmpty } }

    func send(_ event: SyncEvent) {
        for continuation in listeners.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

}
