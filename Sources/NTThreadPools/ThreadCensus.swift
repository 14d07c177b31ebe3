import Synchronization

/// The threads this process started (`startThread`) while they run, by group (a pool's name,
/// the epoll loop), and the jobs waiting for each pool's threads: what an operator's
/// `/metrics` says of them. Every thread of the project starts through `startThread`, so none
/// goes uncounted.
public enum ThreadCensus {
    public struct Group: Sendable, Equatable {
        public let name: String
        /// Threads of the group running now.
        public let threads: Int
        /// Jobs queued for the group's pools, not started yet.
        public let waitingJobs: Int
    }

    /// Every group with a thread running or a pool enrolled, by name.
    public static var groups: [Group] {
        let (threads, queues) = state.withLock { ($0.threads, Array($0.queues.values)) }
        var waiting: [String: Int] = [:]
        for queue in queues { waiting[queue.group, default: 0] += queue.waitingJobs() }
        return Set(threads.keys).union(waiting.keys).sorted().map {
            Group(name: $0, threads: threads[$0] ?? 0, waitingJobs: waiting[$0] ?? 0)
        }
    }

    private struct Queue {
        let group: String
        let waitingJobs: @Sendable () -> Int
    }

    private struct State {
        var threads: [String: Int] = [:]
        var queues: [ObjectIdentifier: Queue] = [:]
    }

    private static let state = Mutex(State())

    static func threadStarted(_ group: String) {
        state.withLock { $0.threads[group, default: 0] += 1 }
    }

    static func threadEnded(_ group: String) {
        state.withLock { state in
            let left = (state.threads[group] ?? 1) - 1
            state.threads[group] = left > 0 ? left : nil
        }
    }

    /// A pool's queue, counted until `leave`.
    static func enroll(_ id: ObjectIdentifier, group: String, waitingJobs: @escaping @Sendable () -> Int) {
        state.withLock { $0.queues[id] = Queue(group: group, waitingJobs: waitingJobs) }
    }

    static func leave(_ id: ObjectIdentifier) {
        _ = state.withLock { $0.queues.removeValue(forKey: id) }
    }
}
