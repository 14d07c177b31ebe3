import Foundation

/// Drains the durable queue: claims the items that may go (in dependency order, several at
/// once), makes one attempt at each, records how it went, and sleeps until the next item is
/// due, a write adds one, or a transfer ends. Every decision lives in the database, so a
/// killed process resumes exactly where it was at the next `start()`.
actor UploadQueue {
    private let store: LocalStore
    private let server: ServerEndpoint
    private let options: SyncOptions
    private let policy: RetryPolicy
    let events: SyncEvents

    private var transport: CurlMulti?
    private var lock: QueueLock?
    private var loop: Task<Void, Never>?
    private var inflight: [Int64: Task<Void, Never>] = [:]
    private var wake: CheckedContinuation<Void, Never>?
    private var woken = false
    private var timer: Task<Void, Never>?
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private var observer: Int?

    init(store: LocalStore, server: ServerEndpoint, options: SyncOptions, events: SyncEvents) {
        self.store = store
        self.server = server
        self.options = options
        self.policy = RetryPolicy(options)
        self.events = events
    }

    var isRunning: Bool { loop != nil }

    /// Resumes what was in flight when the process died, then drains. Idempotent. Throws
    /// `storageUnavailable` while another process drains the same storage directory.
    func start() async throws(NoughtyToursError) {
        guard loop == nil else { return }
        let lock = try QueueLock(directory: store.directory)
        try await store.write { db in try Queue.resumeInterrupted(db) }
        transport = try CurlMulti(connectionsPerHost: options.concurrentTransfers)
        self.lock = lock
        // Every committed write that touches the queue (a capture, a sync()) wakes the drain.
        observer = await store.observeQueue { [weak self] in
            Task { await self?.wakeUp() }
        }
        loop = Task { await run() }
    }

    /// Stops draining: transfers in flight stop and go back to pending, their attempt not
    /// counted. Idempotent.
    func stop() async {
        guard let loop else { return }
        self.loop = nil
        loop.cancel()
        wakeUp()
        await loop.value
        let running = inflight.values
        for task in running { task.cancel() }
        for task in running { await task.value }
        transport?.shutdown()
        transport = nil
        if let observer { await store.stopObservingQueue(observer) }
        observer = nil
        lock = nil
        resumeIdleWaiters()
    }

    /// Returns once nothing can be sent now: every item uploaded, failed, or waiting on one
    /// that failed; or local storage is failing (or at once when the queue is not running).
    func idle() async {
        guard loop != nil else { return }
        await withCheckedContinuation { continuation in
            idleWaiters.append(continuation)
            wakeUp()
        }
    }

    func wakeUp() {
        woken = true
        wake?.resume()
        wake = nil
    }

    private func run() async {
        while !Task.isCancelled {
            woken = false
            let now = Date().timeIntervalSince1970
            var due: Double?
            var claimed: [QueueItem] = []
            do {
                let free = options.concurrentTransfers - inflight.count
                if free > 0 { claimed = try await store.write { db in try Queue.claim(db, limit: free, now: now) } }
                due = try await store.read { db in try Queue.nextDue(db, after: now) }
            } catch {
                // Storage failing (a full disk): try again after a backoff, nothing lost. Nothing
                // can be sent meanwhile, so whoever waits for idle() is let go (and learns of the
                // failure from its next call to storage) instead of waiting for ever.
                due = now + options.initialBackoff.timeInterval + 1
                resumeIdleWaiters()
            }
            guard !Task.isCancelled else {
                for item in claimed { _ = try? await store.write { db in try Queue.interrupted(db, item) } }
                break
            }
            for item in claimed { launch(item) }
            // Idle only if this whole turn was quiet: a transfer that ended (or a write) during
            // its awaits woke it, and what this turn claimed may be stale.
            if inflight.isEmpty, due == nil, !woken { resumeIdleWaiters() }
            if !woken { await idle(until: due) }
        }
    }

    private func idle(until due: Double?) async {
        await withCheckedContinuation { continuation in
            wake = continuation
            if let due {
                let delay = max(0, due - Date().timeIntervalSince1970)
                timer = Task { [weak self] in
                    try? await Task.sleep(for: .seconds(delay))
                    await self?.wakeUp()
                }
            }
        }
        timer?.cancel()
        timer = nil
    }

    private func launch(_ item: QueueItem) {
        guard let transport else { return }
        let uploader = ItemUploader(store: store, transport: transport, server: server, options: options, events: events)
        inflight[item.id] = Task {
            let outcome = await uploader.attempt(item)
            await finish(item, outcome, interrupted: Task.isCancelled)
        }
    }

    /// Records an attempt's outcome: done, tried again later, or failed for good. The item
    /// counts as in flight until its outcome is written: a loop turn while the write is under
    /// way must not find the queue idle (what depends on the item is not claimable yet).
    private func finish(_ item: QueueItem, _ outcome: AttemptOutcome, interrupted: Bool) async {
        defer {
            inflight[item.id] = nil
            wakeUp()
        }
        let named = item.uploadItem
        let attempt = item.attempts + 1
        let now = Date().timeIntervalSince1970
        do {
            switch outcome {
            case .uploaded(let tourId):
                try await store.write { db in
                    if let tourId {
                        // Assigned once by the server: kept from the first success on.
                        try db.run("UPDATE properties SET tour_id = ? WHERE id = ? AND tour_id IS NULL", tourId, item.propertyId)
                    }
                    try Queue.succeeded(db, item, now: now)
                }
                events.send(.uploaded(named))
            case .obsolete:
                try await store.write { db in try Queue.succeeded(db, item, now: now) }
            case .failed where interrupted:
                try await store.write { db in try Queue.interrupted(db, item) }
            case .failed(let error, let retryAfter):
                let decision = policy.decide(error, attempt: attempt, retryAfter: retryAfter, random: Double.random(in: 0..<1))
                let retryAt: Double?
                if case .retry(let wait) = decision { retryAt = now + wait.timeInterval } else { retryAt = nil }
                try await store.write { db in try Queue.attemptFailed(db, item, error: error, retryAt: retryAt, now: now) }
                events.send(.attemptFailed(named, error, attempt: attempt, willRetry: retryAt != nil))
            }
        } catch {
            // Not recorded (storage failing): the item stays in flight in the database and
            // resumes at the next start(); it is not lost.
        }
    }

    private func resumeIdleWaiters() {
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}

extension LocalStore {
    /// Calls `handler` after every committed write that changed the queue.
    func observeQueue(_ handler: @escaping @Sendable () -> Void) -> Int {
        observation.add { tables in if tables.contains("queue_items") { handler() } }
    }

    func stopObservingQueue(_ token: Int) {
        observation.remove(token)
    }
}
