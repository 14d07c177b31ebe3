import NTThreadPools
import Synchronization

/// What `DatabasePool` keeps for reads on event loops (see its documentation): a connection
/// per loop, opened on `NonWaitingVFS`, and the queries its requests asked to join their
/// next read.
extension DatabasePool {
    /// Whether event loops read in place (`loopReaderCount` above 0).
    public var readsOnEventLoops: Bool { !loopReaders.isEmpty }

    /// A loop's connection, used by one read at a time (another read on the loop meanwhile goes
    /// to the reader threads), and the queries waiting for the loop's next read. `joining` is
    /// touched by the loop's own thread alone.
    final class LoopReader: @unchecked Sendable {
        let connection: SQLiteConnection
        let busy = Atomic<Bool>(false)
        private var joining: [(query: SQLStatement, pending: SQLPendingRows)] = []

        init(_ connection: SQLiteConnection) {
            self.connection = connection
        }

        func join(_ query: SQLStatement, _ pending: SQLPendingRows) {
            joining.append((query, pending))
        }

        /// The queries waiting, taken for a read to run (none already answered or run).
        func takeJoining() -> JoinedQueries? {
            guard !joining.isEmpty else { return nil }
            let taken = joining.filter { $0.pending.take() }
            joining.removeAll(keepingCapacity: true)
            return taken.isEmpty ? nil : JoinedQueries(taken)
        }
    }

    /// The calling thread's loop connection, when it is an event loop's that has one.
    var callingLoopsReader: LoopReader? {
        guard let loop = EventLoopThread.current, loop.index < loopReaders.count else { return nil }
        return loopReaders[loop.index]
    }

    /// Runs `read` with the queries that joined this loop's next read, and answers each of
    /// them however the read ends (a query that never ran gets the read's error).
    func answeringJoined<T>(_ read: (JoinedQueries?) async throws -> T) async throws -> T {
        let joined = callingLoopsReader?.takeJoining()
        do {
            let value = try await read(joined)
            // Every read runs its joined queries before its body: each has its result.
            joined?.answer(orElse: StorageError(.failed, "a read ended before the query joined to it ran"))
            return value
        } catch {
            joined?.answer(orElse: error)
            throw error
        }
    }

    enum LoopAttempt<T> {
        case answered(T)
        /// Not on a loop, its connection busy, or a wait refused: the reader threads answer.
        case elsewhere
    }

    /// `attempt` on the calling loop's own connection, when the caller is an event loop's
    /// thread and that connection is free. Its outcome counts only if no wait was refused
    /// meanwhile: a body may have turned a refused read into an answer (an error caught, a
    /// row missing). A body that suspends on another thread is never trusted either.
    func onTheLoop<T>(_ attempt: (SQLiteConnection) async throws -> T) async throws -> LoopAttempt<T> {
        guard let loop = EventLoopThread.current, loop.index < loopReaders.count else { return .elsewhere }
        let reader = loopReaders[loop.index]
        guard reader.busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return .elsewhere }
        defer { reader.busy.store(false, ordering: .releasing) }
        let refusedBefore = loop.refusedWaits
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await attempt(reader.connection))
        } catch {
            outcome = .failure(error)
        }
        guard EventLoopThread.current === loop, loop.refusedWaits == refusedBefore else {
            // A refused read ended SQLite's transaction already; a refused lock may not have.
            _ = try? reader.connection.run("ROLLBACK", arguments: [])
            return .elsewhere
        }
        return .answered(try outcome.get())
    }
}

/// Queries other callers asked on a loop (`DatabasePool.prefetch`), run first in a read's
/// snapshot and answered once the read is done: by then the attempt that counts has run them
/// (a loop's refused attempt is run again, these with it, on a reader thread). Each attempt
/// runs and the read answers one after the other, never at once.
final class JoinedQueries: @unchecked Sendable {
    private let entries: [(query: SQLStatement, pending: SQLPendingRows)]
    private var results: [Result<[Row], any Error>?]

    init(_ entries: [(query: SQLStatement, pending: SQLPendingRows)]) {
        self.entries = entries
        results = Array(repeating: nil, count: entries.count)
    }

    /// Runs each query on `connection` (in the read's transaction); a failure is its own.
    func run(on connection: SQLiteConnection) {
        for (index, entry) in entries.enumerated() {
            results[index] = Result { try connection.query(entry.query.sql, arguments: entry.query.arguments) }
        }
    }

    func answer(orElse error: any Error) {
        for (index, entry) in entries.enumerated() {
            entry.pending.answer(results[index] ?? .failure(error))
        }
    }
}
