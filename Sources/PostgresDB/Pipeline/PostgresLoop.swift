import CLinux
import CPostgres
import Synchronization
import ThreadPools
#if canImport(Glibc)
import Glibc
#endif

/// The I/O of a set of PostgreSQL connections in libpq's pipeline mode: one thread polls
/// every connection's socket and a wake-up descriptor, does what each connection's
/// `PipelineMachine` says with libpq's non-blocking calls, and hands each answer to the task
/// that asked. No thread waits out a round trip; askers await. Connecting (libpq's connect
/// blocks) runs on a thread of its own, so a server that is away stalls no other connection.
final class PostgresLoop: Sendable {
    /// Statements handed over together go out in one batch (one send, one sync point).
    private let handed = Mutex(Handed())
    private let wake: Int32
    private let connector: ThreadPool
    private let nextID = Atomic<Int>(0)
    private let batches = Atomic<Int>(0)
    let url: String

    private struct Handed: ~Copyable {
        var events: [Event] = []
        /// Handed quietly: joins `events` with the next event handed otherwise, or at
        /// `wakeUp`; an awake loop does not take them alone.
        var quiet: [Event] = []
        /// The loop's thread will look at `events` before it sleeps again.
        var awake = true
        var stopped = false
    }

    private enum Event: Sendable {
        case ask(connection: Int, [Int: Asked])
        case cancel(connection: Int, id: Int)
        case connected(connection: Int, Handle)
        case connectFailed(connection: Int, PostgresError)
    }

    /// One statement asked: its text, its values, and where its answer goes.
    struct Asked: Sendable {
        let statement: SQLStatement
        let group: AnswerGroup
        let slot: Int
    }

    /// A libpq connection handed from the connecting thread to the loop's.
    struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// `modes`: one connection each. `statementTimeoutSeconds` bounds a statement on the server
    /// (statement_timeout) and, one second later, on this side (the connection is given up).
    init(url: String, name: String, modes: [PipelineMachine<PostgresResult>.Mode], statementTimeoutSeconds: Int) {
        self.url = url
        wake = nt_eventfd()
        precondition(wake >= 0, "eventfd failed: \(errno)")
        connector = ThreadPool(name: name + "-connect", threads: 1)
        let deadline = Duration.seconds(statementTimeoutSeconds + 1)
        startThread(named: name) { [self] in
            var drivers = modes.map { Driver(machine: PipelineMachine(mode: $0, deadline: deadline)) }
            serve(&drivers, statementTimeoutSeconds: statementTimeoutSeconds)
        }
    }

    /// The thread holds the loop until `stop`.
    deinit { _ = Glibc.close(wake) }

    /// Fails what is asked and in flight, and ends the loop's thread.
    func stop() {
        handed.withLock { $0.stopped = true }
        poke()
        connector.stop()
    }

    /// Batches sent (one send each) since the start, on every connection: round trips.
    var batchesSent: Int { batches.load(ordering: .relaxed) }

    /// The results of `statements`, sent together on `connection` in one batch; throws the
    /// first failure.
    func ask(_ connection: Int, _ statements: [SQLStatement]) async throws -> [PostgresResult] {
        let ids = (0..<statements.count).map { _ in nextID.wrappingAdd(1, ordering: .relaxed).oldValue }
        let results = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let group = AnswerGroup(count: statements.count) { continuation.resume(returning: $0) }
                hand(.ask(connection: connection, Dictionary(uniqueKeysWithValues: zip(ids, statements.enumerated().map {
                    Asked(statement: $0.element, group: group, slot: $0.offset)
                }))), failing: group)
            }
        } onCancel: {
            for id in ids { hand(.cancel(connection: connection, id: id), failing: nil) }
        }
        // A cancelled asker's failure is its task's cancellation, not the database's. (Answers
        // that came are answers: a COMMIT that came is committed, cancelled or not.)
        if Task.isCancelled, results.contains(where: { if case .failure = $0 { true } else { false } }) { throw CancellationError() }
        return try results.map { try $0.get() }
    }

    /// Sends `statements` on `connection` without waiting for their answers (a read's COMMIT),
    /// or with `answered` told them when they come: what is asked next on the connection goes
    /// out behind them.
    /// `quietly`: the loop is not woken for them; they go out with the next statements asked on
    /// the loop, or at `wakeUp`.
    func send(_ connection: Int, _ statements: [SQLStatement], quietly: Bool = false,
              answered: (@Sendable ([Result<PostgresResult, PostgresError>]) -> Void)? = nil) {
        let group = AnswerGroup(count: statements.count, answered: answered)
        var asked: [Int: Asked] = [:]
        for (slot, statement) in statements.enumerated() {
            asked[nextID.wrappingAdd(1, ordering: .relaxed).oldValue] = Asked(statement: statement, group: group, slot: slot)
        }
        hand(.ask(connection: connection, asked), failing: group, quietly: quietly)
    }

    /// Wakes the loop if it sleeps: what was handed over quietly goes out.
    func wakeUp() {
        let asleep = handed.withLock { handed -> Bool in
            handed.events += handed.quiet
            handed.quiet = []
            defer { handed.awake = true }
            return !handed.awake && !handed.stopped
        }
        if asleep { poke() }
    }

    private static let stopped = PostgresError(sqlState: "", message: "the database connections have stopped")

    private func hand(_ event: Event, failing group: AnswerGroup?, quietly: Bool = false) {
        let asleep = handed.withLock { handed -> Bool? in
            guard !handed.stopped else { return nil }
            if quietly {
                handed.quiet.append(event)
                return false
            }
            handed.events += handed.quiet
            handed.quiet = []
            handed.events.append(event)
            defer { handed.awake = true }
            return !handed.awake
        }
        switch asleep {
        case nil: group?.failAll(Self.stopped)
        case true?: poke()
        case false?: break
        }
    }

    private func poke() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    /// What was handed over since the last call; when nothing was, the loop's thread is about
    /// to sleep (an asker then wakes it). nil once stopped.
    private func takeHanded() -> [Event]? {
        handed.withLock { handed in
            guard !handed.stopped else { return nil }
            let events = handed.events
            handed.events = []
            handed.awake = !events.isEmpty
            return events
        }
    }

    // MARK: The loop's thread

    /// One connection as the loop's thread keeps it.
    private struct Driver {
        var machine: PipelineMachine<PostgresResult>
        var connection: OpaquePointer?
        /// What each statement asked and not yet answered is, by id.
        var asked: [Int: Asked] = [:]
        /// libpq holds output the socket would not take yet.
        var flushing = false
    }

    private func serve(_ drivers: inout [Driver], statementTimeoutSeconds: Int) {
        while let events = takeHanded() {
            for event in events {
                switch event {
                case .ask(let index, let asked):
                    drivers[index].asked.merge(asked) { $1 }
                    for id in asked.keys.sorted() {
                        perform(drivers[index].machine.asked(.init(id: id, sql: asked[id]!.statement.sql)), &drivers[index], index, statementTimeoutSeconds)
                    }
                case .cancel(let index, let id):
                    perform(drivers[index].machine.cancelled(id), &drivers[index], index, statementTimeoutSeconds)
                case .connected(let index, let handle):
                    guard drivers[index].machine.state == .opening else {
                        PQfinish(handle.pointer) // not asked for (cannot happen: one open at a time)
                        continue
                    }
                    drivers[index].connection = handle.pointer
                    perform(drivers[index].machine.connected(), &drivers[index], index, statementTimeoutSeconds)
                case .connectFailed(let index, let error):
                    perform(drivers[index].machine.connectFailed(error), &drivers[index], index, statementTimeoutSeconds)
                }
            }
            let now = ContinuousClock.now
            for index in drivers.indices {
                perform(drivers[index].machine.turn(now: now), &drivers[index], index, statementTimeoutSeconds)
                // A send the socket took only in part makes libpq read what has arrived:
                // answers can then sit in its buffer with nothing on the socket to wake poll.
                receive(&drivers[index], index, statementTimeoutSeconds, reading: false)
            }
            var polled = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            var owners: [Int] = []
            var due: ContinuousClock.Instant?
            for index in drivers.indices {
                if let at = drivers[index].machine.nextDeadline { due = min(due ?? at, at) }
                guard let connection = drivers[index].connection else { continue }
                polled.append(pollfd(fd: PQsocket(connection), events: Int16(POLLIN) | (drivers[index].flushing ? Int16(POLLOUT) : 0), revents: 0))
                owners.append(index)
            }
            let timeout: Int32 = !events.isEmpty ? 0 : due.map { at in
                let left = at - ContinuousClock.now
                return Int32(clamping: max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            } ?? -1
            if poll(&polled, nfds_t(polled.count), timeout) > 0 {
                if polled[0].revents != 0 {
                    var count: UInt64 = 0
                    _ = read(wake, &count, 8)
                }
                for (offset, index) in owners.enumerated() where polled[offset + 1].revents != 0 {
                    receive(&drivers[index], index, statementTimeoutSeconds, reading: true)
                }
            }
            let later = ContinuousClock.now
            for index in drivers.indices {
                perform(drivers[index].machine.tick(now: later), &drivers[index], index, statementTimeoutSeconds)
            }
        }
        for index in drivers.indices {
            perform(drivers[index].machine.broken(Self.stopped), &drivers[index], index, statementTimeoutSeconds)
            for asked in drivers[index].asked.values { asked.group.deliver(asked.slot, .failure(Self.stopped)) }
        }
        // Handed but never taken: answered too, so no asker waits on a stopped loop.
        let left = handed.withLock { handed in
            defer { handed.events = []; handed.quiet = [] }
            return handed.events + handed.quiet
        }
        for case .ask(_, let asked) in left {
            for one in asked.values { one.group.deliver(one.slot, .failure(Self.stopped)) }
        }
    }

    /// Does what the machine said; a send libpq refuses means the connection broke.
    private func perform(_ actions: [PipelineMachine<PostgresResult>.Action], _ driver: inout Driver, _ index: Int, _ timeout: Int) {
        for action in actions {
            switch action {
            case .open:
                let url = url
                let accepted = connector.submit { [self] _ in
                    do throws(PostgresError) {
                        hand(.connected(connection: index, Handle(pointer: try Self.connect(url, statementTimeoutSeconds: timeout))), failing: nil)
                    } catch {
                        hand(.connectFailed(connection: index, error), failing: nil)
                    }
                }
                if !accepted { perform(driver.machine.connectFailed(Self.stopped), &driver, index, timeout) }
            case .prepare(let name, let sql):
                guard let connection = driver.connection, PQsendPrepare(connection, name, PostgresConnection.numbered(sql), 0, nil) == 1 else {
                    return perform(driver.machine.broken(.connectionFailed(driver.connection)), &driver, index, timeout)
                }
            case .execute(let id, let name):
                let arguments = driver.asked[id]?.statement.arguments ?? []
                guard let connection = driver.connection, withParameters(arguments, { count, values, lengths, formats in
                    PQsendQueryPrepared(connection, name, count, values, lengths, formats, 0)
                }) == 1 else {
                    return perform(driver.machine.broken(.connectionFailed(driver.connection)), &driver, index, timeout)
                }
            case .sync:
                guard let connection = driver.connection, PQpipelineSync(connection) == 1 else {
                    return perform(driver.machine.broken(.connectionFailed(driver.connection)), &driver, index, timeout)
                }
            case .flush:
                guard let connection = driver.connection else { continue }
                batches.add(1, ordering: .relaxed)
                switch PQflush(connection) {
                case 0: driver.flushing = false
                case 1: driver.flushing = true
                default: return perform(driver.machine.broken(.connectionFailed(connection)), &driver, index, timeout)
                }
            case .answer(let id, let result):
                if let asked = driver.asked.removeValue(forKey: id) { asked.group.deliver(asked.slot, .success(result)) }
            case .fail(let ids, let error):
                for id in ids {
                    if let asked = driver.asked.removeValue(forKey: id) { asked.group.deliver(asked.slot, .failure(error)) }
                }
            case .close:
                PQfinish(driver.connection)
                driver.connection = nil
                driver.flushing = false
            }
        }
    }

    /// Sends what libpq still holds, reads what arrived (`reading`: else only what libpq has
    /// read already), and tells the machine each result.
    private func receive(_ driver: inout Driver, _ index: Int, _ timeout: Int, reading: Bool) {
        guard let connection = driver.connection, driver.machine.inFlightCount > 0 || reading else { return }
        if reading {
            if driver.flushing {
                perform([.flush], &driver, index, timeout)
                guard driver.connection != nil else { return }
            }
            guard PQconsumeInput(connection) == 1 else {
                return perform(driver.machine.broken(.connectionFailed(connection)), &driver, index, timeout)
            }
        }
        while driver.connection != nil, driver.machine.inFlightCount > 0, PQisBusy(connection) == 0 {
            guard let pointer = PQgetResult(connection) else {
                // A NULL ends a statement's results; before a sync point it means none came yet.
                if driver.machine.awaitsSync { break }
                perform(driver.machine.statementEnded(), &driver, index, timeout)
                continue
            }
            let status = PQresultStatus(pointer)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(pointer)
                perform(driver.machine.syncReached(), &driver, index, timeout)
            } else if status == PGRES_PIPELINE_ABORTED {
                PQclear(pointer)
                perform(driver.machine.receivedAborted(), &driver, index, timeout)
            } else if let error = PostgresResult.error(of: pointer, connection: connection) {
                PQclear(pointer)
                perform(driver.machine.receivedError(error), &driver, index, timeout)
            } else {
                perform(driver.machine.received(PostgresResult(pointer)), &driver, index, timeout)
            }
        }
        if driver.connection != nil, PQstatus(connection) != CONNECTION_OK {
            perform(driver.machine.broken(.connectionFailed(connection)), &driver, index, timeout)
        }
    }

    /// A new connection in pipeline mode, non-blocking, with the server's statement timeout.
    private static func connect(_ url: String, statementTimeoutSeconds: Int) throws(PostgresError) -> OpaquePointer {
        let made = try PostgresConnection.connect(url: url)
        PQclear(PQexec(made, "SET statement_timeout = \(statementTimeoutSeconds * 1000)"))
        guard PQenterPipelineMode(made) == 1, PQsetnonblocking(made, 1) == 0 else {
            let error = PostgresError.connectionFailed(made)
            PQfinish(made)
            throw error
        }
        return made
    }
}

/// The answers to statements asked together, given to their asker at once when the last
/// one has come (no `answered`: nobody waits, the answers are dropped).
final class AnswerGroup: Sendable {
    private let state: Mutex<(results: [Result<PostgresResult, PostgresError>?], left: Int)>
    private let answered: (@Sendable ([Result<PostgresResult, PostgresError>]) -> Void)?

    init(count: Int, answered: (@Sendable ([Result<PostgresResult, PostgresError>]) -> Void)?) {
        state = Mutex((Array(repeating: nil, count: count), count))
        self.answered = answered
    }

    func deliver(_ slot: Int, _ result: Result<PostgresResult, PostgresError>) {
        let complete = state.withLock { state -> [Result<PostgresResult, PostgresError>]? in
            guard state.results[slot] == nil else { return nil }
            state.results[slot] = result
            state.left -= 1
            return state.left == 0 ? state.results.map { $0! } : nil
        }
        if let complete { answered?(complete) }
    }

    func failAll(_ error: PostgresError) {
        for slot in 0..<state.withLock({ $0.results.count }) { deliver(slot, .failure(error)) }
    }
}
