import CNTPostgres
import Synchronization
import NTThreadPools
#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL connections one thread drives in libpq's pipeline mode, as that thread's
/// `ThreadIO`: what its jobs ask goes out when their run ends (one batch per connection),
/// the thread polls the sockets when it has nothing to do, and each answer is handed to the
/// task that asked. It does what each connection's `PipelineMachine` says with libpq's
/// non-blocking calls. Only its thread touches it (`PipelinedConnections` brings what comes
/// from elsewhere there as a job); connecting, which blocks in libpq, runs on `connector`.
final class ConnectionSet: ThreadIO, @unchecked Sendable {
    enum Event: Sendable {
        case ask(connection: Int, [Int: Asked])
        /// A statement any identical one asked the same way and not sent yet may answer (a
        /// token's check: one execution, sent after both were asked, answers both).
        case askJoining(connection: Int, id: Int, Asked)
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

    /// A libpq connection handed from the connecting thread to the set's.
    struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// One connection as the thread keeps it.
    private struct Slot {
        var machine: PipelineMachine<PostgresResult>
        var connection: OpaquePointer?
        /// What each statement asked and not yet answered is, by id.
        var asked: [Int: Asked] = [:]
        /// libpq holds output the socket would not take yet.
        var flushing = false
        /// What `askJoining` asked, and who joined it: answered with it.
        var joins = StatementJoins<Asked>()
    }

    /// What a connection's session says by itself, for whoever asked to hear it.
    enum SessionEvent: Sendable {
        /// A NOTIFY on a channel the connection LISTENs to (its `setup` did).
        case notified(connection: Int, channel: String, payload: String)
        /// The connection ended (broke, overdue, or stopped): what its session held is gone.
        case closed(connection: Int)
    }

    static let stopped = PostgresError(sqlState: "", message: "the database connections have stopped")

    private var slots: [Slot]
    private let url: String
    private let statementTimeoutSeconds: Int
    /// Statements each connection runs once made, before its first batch (by connection).
    private let setup: @Sendable (Int) -> [String]
    private let sessionEvents: (@Sendable (SessionEvent) -> Void)?
    private let connector: ThreadPool
    private let batches: Counter
    /// Brings an event to this set's thread (a connection made on the connector's).
    private let post: @Sendable (Event) -> Void
    /// The slots whose sockets `descriptors` appended, in order.
    private var polledSlots: [Int] = []

    /// `modes`: one connection each. `statementTimeoutSeconds` bounds a statement on the server
    /// (statement_timeout) and, one second later, on this side (the connection is given up).
    /// `setup` and `sessionEvents`: see `PipelinedConnections`.
    init(url: String, modes: [PipelineMachine<PostgresResult>.Mode], statementTimeoutSeconds: Int, setup: @escaping @Sendable (Int) -> [String],
         sessionEvents: (@Sendable (SessionEvent) -> Void)?, connector: ThreadPool, batches: Counter, post: @escaping @Sendable (Event) -> Void) {
        let deadline = Duration.seconds(statementTimeoutSeconds + 1)
        slots = modes.map { Slot(machine: PipelineMachine(mode: $0, deadline: deadline)) }
        self.url = url
        self.statementTimeoutSeconds = statementTimeoutSeconds
        self.setup = setup
        self.sessionEvents = sessionEvents
        self.connector = connector
        self.batches = batches
        self.post = post
    }

    /// What a job asked or another thread brought: statements wait for the next `turn`.
    func handle(_ event: Event) {
        switch event {
        case .ask(let index, let asked):
            slots[index].asked.merge(asked) { $1 }
            for id in asked.keys.sorted() {
                perform(slots[index].machine.asked(.init(id: id, sql: asked[id]!.statement.sql)), index)
            }
        case .askJoining(let index, let id, let asked):
            let key = StatementJoins<Asked>.Key(sql: asked.statement.sql, values: asked.statement.arguments.map(\.sqlValue))
            if !slots[index].joins.join(key, id: id, asked) { handle(.ask(connection: index, [id: asked])) }
        case .cancel(let index, let id):
            perform(slots[index].machine.cancelled(id), index)
        case .connected(let index, let handle):
            guard slots[index].machine.state == .opening else {
                PQfinish(handle.pointer) // not asked for (cannot happen: one open at a time)
                return
            }
            slots[index].connection = handle.pointer
            perform(slots[index].machine.connected(), index)
        case .connectFailed(let index, let error):
            perform(slots[index].machine.connectFailed(error), index)
        }
    }

    func turn() {
        let now = ContinuousClock.now
        for index in slots.indices {
            // Sent now (or waiting for a connection): what is asked after this joins nothing.
            slots[index].joins.batchSent()
            perform(slots[index].machine.turn(now: now), index)
            // A send the socket took only in part makes libpq read what has arrived: answers
            // can then sit in its buffer with nothing on the socket to wake poll.
            receive(index, reading: false)
        }
    }

    func descriptors(_ polled: inout [pollfd]) -> ContinuousClock.Instant? {
        polledSlots.removeAll(keepingCapacity: true)
        var due: ContinuousClock.Instant?
        for index in slots.indices {
            if let at = slots[index].machine.nextDeadline { due = min(due ?? at, at) }
            guard let connection = slots[index].connection else { continue }
            polled.append(pollfd(fd: PQsocket(connection), events: Int16(POLLIN) | (slots[index].flushing ? Int16(POLLOUT) : 0), revents: 0))
            polledSlots.append(index)
        }
        return due
    }

    func polled(_ polled: ArraySlice<pollfd>) {
        for (offset, index) in polledSlots.enumerated() where polled[polled.startIndex + offset].revents != 0 {
            receive(index, reading: true)
        }
        let now = ContinuousClock.now
        for index in slots.indices { perform(slots[index].machine.tick(now: now), index) }
    }

    func stopped() {
        for index in slots.indices {
            perform(slots[index].machine.broken(Self.stopped), index)
            for asked in Array(slots[index].asked.values) + slots[index].joins.removeAll() { asked.group.deliver(asked.slot, .failure(Self.stopped)) }
            slots[index].asked = [:]
        }
    }

    /// Does what the machine said; a send libpq refuses means the connection broke.
    private func perform(_ actions: [PipelineMachine<PostgresResult>.Action], _ index: Int) {
        for action in actions {
            switch action {
            case .open:
                let (url, timeout, post, setup) = (url, statementTimeoutSeconds, post, setup(index))
                let accepted = connector.submit { _ in
                    do throws(PostgresError) {
                        post(.connected(connection: index, Handle(pointer: try Self.connect(url, statementTimeoutSeconds: timeout, setup: setup))))
                    } catch {
                        post(.connectFailed(connection: index, error))
                    }
                }
                if !accepted { perform(slots[index].machine.connectFailed(Self.stopped), index) }
            case .prepare(let name, let sql):
                guard let connection = slots[index].connection, PQsendPrepare(connection, name, PostgresConnection.numbered(sql), 0, nil) == 1 else {
                    return perform(slots[index].machine.broken(.connectionFailed(slots[index].connection)), index)
                }
            case .execute(let id, let name):
                let arguments = slots[index].asked[id]?.statement.arguments ?? []
                guard let connection = slots[index].connection, withParameters(arguments, { count, values, lengths, formats in
                    PQsendQueryPrepared(connection, name, count, values, lengths, formats, 0)
                }) == 1 else {
                    return perform(slots[index].machine.broken(.connectionFailed(slots[index].connection)), index)
                }
            case .sync:
                guard let connection = slots[index].connection, PQpipelineSync(connection) == 1 else {
                    return perform(slots[index].machine.broken(.connectionFailed(slots[index].connection)), index)
                }
            case .flush:
                guard let connection = slots[index].connection else { continue }
                batches.add()
                switch PQflush(connection) {
                case 0: slots[index].flushing = false
                case 1: slots[index].flushing = true
                default: return perform(slots[index].machine.broken(.connectionFailed(connection)), index)
                }
            case .answer(let id, let result):
                deliver(id, .success(result), index)
            case .fail(let ids, let error):
                for id in ids { deliver(id, .failure(error), index) }
            case .close:
                let ended = slots[index].connection != nil
                PQfinish(slots[index].connection)
                slots[index].connection = nil
                slots[index].flushing = false
                if ended { sessionEvents?(.closed(connection: index)) }
            }
        }
    }

    /// A statement's answer, to its asker and to those who joined it.
    private func deliver(_ id: Int, _ result: Result<PostgresResult, PostgresError>, _ index: Int) {
        if let asked = slots[index].asked.removeValue(forKey: id) { asked.group.deliver(asked.slot, result) }
        for asked in slots[index].joins.answered(id) { asked.group.deliver(asked.slot, result) }
    }

    /// Sends what libpq still holds, reads what arrived (`reading`: else only what libpq has
    /// read already), and tells the machine each result.
    private func receive(_ index: Int, reading: Bool) {
        guard let connection = slots[index].connection, slots[index].machine.inFlightCount > 0 || reading else { return }
        if reading {
            if slots[index].flushing {
                perform([.flush], index)
                guard slots[index].connection != nil else { return }
            }
            guard PQconsumeInput(connection) == 1 else {
                return perform(slots[index].machine.broken(.connectionFailed(connection)), index)
            }
        }
        while slots[index].connection != nil, slots[index].machine.inFlightCount > 0, PQisBusy(connection) == 0 {
            guard let pointer = PQgetResult(connection) else {
                // A NULL ends a statement's results; before a sync point it means none came yet.
                if slots[index].machine.awaitsSync { break }
                perform(slots[index].machine.statementEnded(), index)
                continue
            }
            let status = PQresultStatus(pointer)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(pointer)
                perform(slots[index].machine.syncReached(), index)
            } else if status == PGRES_PIPELINE_ABORTED {
                PQclear(pointer)
                perform(slots[index].machine.receivedAborted(), index)
            } else if let error = PostgresResult.error(of: pointer, connection: connection) {
                PQclear(pointer)
                perform(slots[index].machine.receivedError(error), index)
            } else {
                perform(slots[index].machine.received(PostgresResult(pointer)), index)
            }
        }
        // Read with the results, or alone on an idle connection that LISTENs.
        if slots[index].connection != nil { notifications(index, connection) }
        if slots[index].connection != nil, PQstatus(connection) != CONNECTION_OK {
            perform(slots[index].machine.broken(.connectionFailed(connection)), index)
        }
    }

    /// The NOTIFYs libpq has read for the connection, told as session events (dropped when
    /// nobody asked to hear them).
    private func notifications(_ index: Int, _ connection: OpaquePointer) {
        while let notice = PQnotifies(connection) {
            let channel = String(cString: notice.pointee.relname)
            let payload = String(cString: notice.pointee.extra)
            PQfreemem(notice)
            sessionEvents?(.notified(connection: index, channel: channel, payload: payload))
        }
    }

    /// A new connection in pipeline mode, non-blocking, with the server's statement timeout and
    /// `setup` run.
    private static func connect(_ url: String, statementTimeoutSeconds: Int, setup: [String]) throws(PostgresError) -> OpaquePointer {
        let made = try PostgresConnection.connect(url: url)
        for statement in ["SET statement_timeout = \(statementTimeoutSeconds * 1000)"] + setup {
            let result = PQexec(made, statement)
            defer { PQclear(result) }
            if let error = PostgresResult.error(of: result, connection: made) {
                PQfinish(made)
                throw error
            }
        }
        guard PQenterPipelineMode(made) == 1, PQsetnonblocking(made, 1) == 0 else {
            let error = PostgresError.connectionFailed(made)
            PQfinish(made)
            throw error
        }
        return made
    }
}

/// Batches sent, across every connection set: round trips.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
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
