import Synchronization
import NTThreadPools

/// Threads that each drive PostgreSQL connections of their own (a `ConnectionSet` each). A
/// statement asked on the thread that owns its connection joins that thread's next batch with
/// no hand-over, and its answer resumes the asker there: the request handlers' threads each
/// have a connection their one-statement reads share. Asked from any other thread, it is
/// brought to the owner as a job.
final class PipelinedConnections: Sendable {
    /// A connection: which thread drives it, and which of that thread's it is.
    struct Place: Sendable, Hashable {
        let thread: Int
        let connection: Int
    }

    let threads: ThreadPool
    private let sets: [ConnectionSet]
    private let mailbox: Mailbox
    private let connector: ThreadPool
    private let nextID = Atomic<Int>(0)

    /// `modes`: the connections of each of `threadCount` threads (0: one per online CPU).
    /// `setup`: statements a connection (by its index on its thread) runs once made, before
    /// anything asked (a LISTEN); `sessionEvents`: told the NOTIFYs the connections receive and
    /// when one ends, on the thread that drives it.
    init(url: String, name: String, threadCount: Int, modes: [PipelineMachine<PostgresResult>.Mode],
         statementTimeoutSeconds: Int, batches: Counter, setup: @escaping @Sendable (Int) -> [String] = { _ in [] },
         sessionEvents: (@Sendable (ConnectionSet.SessionEvent) -> Void)? = nil) {
        let connector = ThreadPool(name: name + "-connect", threads: 1)
        let count = threadCount > 0 ? threadCount : ThreadPool.onlineCPUs
        let mailbox = Mailbox()
        let sets = (0..<count).map { thread in
            ConnectionSet(url: url, modes: modes, statementTimeoutSeconds: statementTimeoutSeconds, setup: setup, sessionEvents: sessionEvents,
                          connector: connector, batches: batches) { mailbox.bring($0, to: thread) }
        }
        threads = ThreadPool(name: name, threads: count, io: { sets[$0] })
        mailbox.open(threads, sets)
        self.sets = sets
        self.mailbox = mailbox
        self.connector = connector
    }

    /// Fails what is asked and in flight, and ends the threads.
    func stop() {
        mailbox.close()
        threads.stop()
        connector.stop()
    }

    /// The calling thread's own connection `connection` when it is one of these threads;
    /// else that connection of a thread taken in turn.
    func place(_ connection: Int) -> Place {
        if let thread = threads.indexOfCurrentThread { return Place(thread: thread, connection: connection) }
        return Place(thread: (nextID.wrappingAdd(1, ordering: .relaxed).oldValue & Int.max) % sets.count, connection: connection)
    }

    /// The results of `statements`, sent together at `place` in one batch; throws the first
    /// failure.
    func ask(_ place: Place, _ statements: [SQLStatement]) async throws -> [PostgresResult] {
        let ids = (0..<statements.count).map { _ in nextID.wrappingAdd(1, ordering: .relaxed).oldValue }
        let results = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let group = AnswerGroup(count: statements.count) { continuation.resume(returning: $0) }
                hand(.ask(connection: place.connection, asked(ids, statements, group)), to: place.thread, failing: group)
            }
        } onCancel: {
            for id in ids { hand(.cancel(connection: place.connection, id: id), to: place.thread, failing: nil) }
        }
        // A cancelled asker's failure is its task's cancellation, not the database's. (Answers
        // that came are answers: a COMMIT that came is committed, cancelled or not.)
        if Task.isCancelled, results.contains(where: { if case .failure = $0 { true } else { false } }) { throw CancellationError() }
        return try results.map { try $0.get() }
    }

    /// Sends `statements` at `place` without waiting for their answers (a read's COMMIT): what
    /// is asked next there goes out behind them.
    func send(_ place: Place, _ statements: [SQLStatement]) {
        let ids = (0..<statements.count).map { _ in nextID.wrappingAdd(1, ordering: .relaxed).oldValue }
        let group = AnswerGroup(count: statements.count, answered: nil)
        hand(.ask(connection: place.connection, asked(ids, statements, group)), to: place.thread, failing: group)
    }

    /// Sends one statement at `place`, `answered` told its answer when it comes. An identical
    /// statement asked this way there and not sent yet answers it instead: one execution,
    /// sent after both were asked.
    func sendJoining(_ place: Place, _ statement: SQLStatement, answered: @escaping @Sendable (Result<PostgresResult, PostgresError>) -> Void) {
        let group = AnswerGroup(count: 1) { answered($0[0]) }
        let asked = ConnectionSet.Asked(statement: statement, group: group, slot: 0)
        hand(.askJoining(connection: place.connection, id: nextID.wrappingAdd(1, ordering: .relaxed).oldValue, asked), to: place.thread, failing: group)
    }

    private func asked(_ ids: [Int], _ statements: [SQLStatement], _ group: AnswerGroup) -> [Int: ConnectionSet.Asked] {
        Dictionary(uniqueKeysWithValues: zip(ids, statements.enumerated().map { ConnectionSet.Asked(statement: $0.element, group: group, slot: $0.offset) }))
    }

    /// On the owning thread at once (its next turn sends it); else as a job of that thread.
    private func hand(_ event: ConnectionSet.Event, to thread: Int, failing group: AnswerGroup?) {
        if threads.indexOfCurrentThread == thread { return sets[thread].handle(event) }
        guard mailbox.bring(event, to: thread) else { return group?.failAll(ConnectionSet.stopped) ?? () }
    }
}

/// Brings events to the thread that owns a connection set, once the pool is made (the sets
/// are made first: its threads start with them); closed at stop, so that the sets and the
/// pool do not hold each other.
private final class Mailbox: Sendable {
    private let owners = Mutex<(pool: ThreadPool, sets: [ConnectionSet])?>(nil)

    func open(_ pool: ThreadPool, _ sets: [ConnectionSet]) { owners.withLock { $0 = (pool, sets) } }
    func close() { owners.withLock { $0 = nil } }

    /// False when stopped: the event will not be handled.
    @discardableResult
    func bring(_ event: ConnectionSet.Event, to thread: Int) -> Bool {
        guard let (pool, sets) = owners.withLock({ $0 }) else { return false }
        return pool.submit(to: thread) { _ in sets[thread].handle(event) }
    }
}
