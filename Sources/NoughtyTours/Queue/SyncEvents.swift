import Synchronization

/// Hands each event to every current listener; costs nothing when there is none.
final class SyncEvents: Sendable {
    private let listeners = Mutex<[Int: EventBuffer]>([:])
    private let counter = Atomic<Int>(0)

    func stream() -> SyncEventStream {
        let id = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let buffer = EventBuffer()
        listeners.withLock { $0[id] = buffer }
        let listening = Listening(buffer: buffer) { [weak self] in
            self?.listeners.withLock { _ = $0.removeValue(forKey: id) }
        }
        return SyncEventStream(listening: listening)
    }

    var isObserved: Bool { listeners.withLock { !$0.isEmpty } }

    func send(_ event: SyncEvent) {
        for buffer in listeners.withLock({ Array($0.values) }) { buffer.append(event) }
    }
}

/// The queue's events for one listener (`NoughtyTours.events()`), until the iterating task is
/// cancelled (what was sent before is still read) or the sequence and its iterator are dropped. A slow reader loses nothing that
/// matters: `resumed`, `uploaded` and `attemptFailed` are always delivered, in order; a progress event
/// replaces the same item's progress not yet read, so the buffer holds at most one progress
/// event per item however fast progress flows.
public struct SyncEventStream: AsyncSequence, Sendable {
    public typealias Element = SyncEvent
    let listening: Listening

    public struct AsyncIterator: AsyncIteratorProtocol {
        let listening: Listening

        public mutating func next() async -> SyncEvent? {
            await listening.buffer.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(listening: listening)
    }
}

/// A listener's registration: removed when the last sequence or iterator holding it goes.
final class Listening: Sendable {
    let buffer: EventBuffer
    private let stop: @Sendable () -> Void

    init(buffer: EventBuffer, stop: @escaping @Sendable () -> Void) {
        self.buffer = buffer
        self.stop = stop
    }

    deinit { stop() }
}

/// One listener's unread events, with progress coalesced per item.
final class EventBuffer: Sendable {
    private struct State {
        var events = EventQueue()
        var waiter: CheckedContinuation<SyncEvent?, Never>?
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Events sent and not yet read.
    var unread: Int { state.withLock { $0.events.count } }

    func append(_ event: SyncEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<SyncEvent?, Never>? in
            guard !state.cancelled else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.events.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// The next event, waiting for one; once the reading task is cancelled, what is buffered
    /// and then nil (as AsyncStream does).
    func next() async -> SyncEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SyncEvent?, Never>) in
                let ready = state.withLock { state -> SyncEvent?? in
                    if let event = state.events.popFirst() { return .some(event) }
                    if state.cancelled || Task.isCancelled {
                        state.cancelled = true
                        return .some(nil)
                    }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<SyncEvent?, Never>? in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}

/// A FIFO of events in which a progress event takes the place of its item's unread one,
/// unless another event of that item came after it (order per item is kept). Pure.
struct EventQueue {
    private var events: [SyncEvent?] = []
    private var head = 0
    /// Where each item's unread progress event is, when nothing of the item follows it.
    private var progress: [UploadItem: Int] = [:]

    var count: Int { events.count - head }

    mutating func append(_ event: SyncEvent) {
        if case .progress(let item, _, _) = event {
            if let index = progress[item] {
                events[index] = event
                return
            }
            progress[item] = events.count
        } else {
            progress[event.item] = nil
        }
        events.append(event)
    }

    mutating func popFirst() -> SyncEvent? {
        guard head < events.count, let event = events[head] else { return nil }
        events[head] = nil
        if case .progress(let item, _, _) = event, progress[item] == head { progress[item] = nil }
        head += 1
        if head == events.count {
            events.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > events.count {
            // Compacting shifts every index: the progress positions move with them.
            events.removeFirst(head)
            progress = progress.mapValues { $0 - head }
            head = 0
        }
        return event
    }
}

extension SyncEvent {
    /// The queue item the event is about.
    var item: UploadItem {
        switch self {
        case .progress(let item, _, _), .resumed(let item, _, _), .uploaded(let item), .attemptFailed(let item, _, _, _): return item
        }
    }
}
