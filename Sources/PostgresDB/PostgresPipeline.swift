import CLinux
import CPostgres
import Synchronization
import ThreadPools
#if canImport(Glibc)
import Glibc
#endif

/// One PostgreSQL connection in libpq's pipeline mode that many reads share. A read's
/// statement is handed to the pipeline's own thread, which sends every statement handed to it
/// since its last turn as one batch (one `send`, one sync point: PostgreSQL answers the batch
/// with one `send` too) and hands each answer to its asker. No thread waits for a round trip:
/// while PostgreSQL works, the handler threads serve other requests, and statements of
/// requests that arrive together share the round trip's system calls and wake-ups, where each
/// blocking round trip paid its own.
///
/// A batch's queries run in one implicit transaction (each its own snapshot, READ COMMITTED).
/// When one fails, PostgreSQL skips the rest of its batch: those are sent again in the next.
/// A statement that is not a query (it may change rows) is a batch of its own, answered once
/// its sync point has committed it, so that no other statement's failure can undo it. The
/// connection opens on first use and again after it broke; a break fails the statements in
/// flight with an unavailable error (the caller may ask again).
final class PostgresPipeline: Sendable {
    private let url: String
    /// What askers hand over.
    private let handed = Mutex(Handed())
    /// Written to wake the pipeline's thread when it sleeps with work handed to it.
    private let wake: Int32

    private struct Handed: ~Copyable {
        var statements: [Asked] = []
        /// The pipeline's thread will look at `statements` before it sleeps again.
        var awake = true
        var stopped = false
    }

    private struct Asked: Sendable {
        let sql: String
        let arguments: [any SQLBindable]
        let continuation: CheckedContinuation<PostgresResult, any Error>
    }

    init(url: String, name: String) {
        self.url = url
        wake = nt_eventfd()
        precondition(wake >= 0, "eventfd failed: \(errno)")
        startThread(named: name) { [self] in
            var connection = Connection(url: url)
            connection.serve(self)
        }
    }

    /// The thread holds the pipeline until `stop`.
    deinit { _ = Glibc.close(wake) }

    /// Fails what is asked and in flight, and ends the pipeline's thread.
    func stop() {
        handed.withLock { $0.stopped = true }
        poke()
    }

    /// The answer to one statement (`?` parameters), prepared once on this connection.
    func answer(_ sql: String, _ arguments: [any SQLBindable]) async throws(PostgresError) -> PostgresResult {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let asleep = handed.withLock { handed -> Bool? in
                    guard !handed.stopped else { return nil }
                    handed.statements.append(Asked(sql: sql, arguments: arguments, continuation: continuation))
                    defer { handed.awake = true }
                    return !handed.awake
                }
                switch asleep {
                case nil: continuation.resume(throwing: Self.stopped)
                case true?: poke()
                case false?: break
                }
            }
        } catch let error as PostgresError {
            throw error
        } catch {
            throw PostgresError(sqlState: "", message: "\(error)")
        }
    }

    private static let stopped = PostgresError(sqlState: "", message: "the database pipeline has stopped")

    private func poke() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    /// What was handed over since the last call; when nothing was, the pipeline's thread is
    /// about to sleep (an asker then wakes it). nil once stopped, when what was handed over
    /// fails.
    private func takeHanded() -> [Asked]? {
        let (statements, stopped) = handed.withLock { handed in
            let statements = handed.statements
            handed.statements = []
            handed.awake = !statements.isEmpty
            return (statements, handed.stopped)
        }
        guard stopped else { return statements }
        for asked in statements { asked.continuation.resume(throwing: Self.stopped) }
        return nil
    }

    /// The pipeline's thread and what only it touches: the libpq connection and what is in
    /// flight on it.
    private struct Connection {
        let url: String
        var connection: OpaquePointer?
        /// Prepared statements by their SQL: their names on this connection.
        var prepared: [String: String] = [:]
        /// Names are never reused on a connection (a failed preparation leaves `prepared`).
        var named = 0
        /// Preparations that failed, by SQL: the statements sent behind one fail with its error
        /// (not "no such prepared statement"). A later ask prepares again, as the blocking
        /// connection does (the schema may have changed).
        var unpreparable: [String: PostgresError] = [:]
        /// What was sent, in order: each gives results then a NULL (a sync point: one result).
        var inFlight: [Sent] = []
        /// A statement of a batch of its own, answered when its sync point comes back.
        var committing: (Asked, Result<PostgresResult, PostgresError>)?
        var resultOfHead: PostgresResult?
        var errorOfHead: PostgresError?
        /// A failure earlier in its batch made PostgreSQL skip the head.
        var headSkipped = false
        /// Statements a failure earlier in their batch skipped: sent again with the next.
        var skipped: [Asked] = []
        /// libpq holds output the socket would not take yet.
        var flushing = false

        enum Sent {
            case prepare(sql: String)
            /// `alone`: at a sync point of its own.
            case execute(Asked, alone: Bool)
            case sync
        }

        init(url: String) { self.url = url }

        mutating func serve(_ pipeline: PostgresPipeline) {
            while let handed = pipeline.takeHanded() {
                let batch = skipped + handed
                skipped = []
                if !batch.isEmpty {
                    send(batch)
                    // A send the socket took only in part makes libpq read what has arrived
                    // (so that neither side waits on the other): answers can then sit in its
                    // buffer with nothing left on the socket to wake the poll below.
                    receive(reading: false)
                }
                let socket = connection.map(PQsocket) ?? -1
                var events = [pollfd(fd: pipeline.wake, events: Int16(POLLIN), revents: 0),
                              pollfd(fd: socket, events: Int16(POLLIN) | (flushing ? Int16(POLLOUT) : 0), revents: 0)]
                // Having sent, look once more for statements before sleeping.
                guard poll(&events, socket >= 0 ? 2 : 1, handed.isEmpty ? -1 : 0) > 0 else { continue }
                if events[0].revents != 0 {
                    var count: UInt64 = 0
                    _ = read(pipeline.wake, &count, 8)
                }
                if socket >= 0, events[1].revents != 0 { receive() }
            }
            close(PostgresPipeline.stopped)
        }

        /// Sends `batch` with one sync point, opening the connection first if need be. A
        /// statement new to this connection is prepared first, at a sync point of its own, so
        /// that no failure of another statement can skip its preparation.
        private mutating func send(_ batch: [Asked]) {
            var unsent = batch[...]
            do throws(PostgresError) {
                let connection = try open()
                for asked in batch where prepared[asked.sql] == nil {
                    unpreparable[asked.sql] = nil
                    named += 1
                    let name = "s\(named)"
                    prepared[asked.sql] = name
                    inFlight.append(.prepare(sql: asked.sql))
                    guard PQsendPrepare(connection, name, PostgresConnection.numbered(asked.sql), 0, nil) == 1 else { throw PostgresError.connectionFailed(connection) }
                    try sync(connection)
                }
                var batchOpen = false
                while let asked = unsent.popFirst() {
                    let name = prepared[asked.sql]! // each was prepared above, or before
                    let alone = !PostgresConnection.isQuery(asked.sql)
                    if alone, batchOpen {
                        try sync(connection)
                        batchOpen = false
                    }
                    inFlight.append(.execute(asked, alone: alone))
                    let sent = withParameters(asked.arguments) { count, values, lengths, formats in
                        PQsendQueryPrepared(connection, name, count, values, lengths, formats, 0)
                    }
                    guard sent == 1 else { throw PostgresError.connectionFailed(connection) }
                    if alone { try sync(connection) } else { batchOpen = true }
                }
                if batchOpen { try sync(connection) }
                try flush(connection)
            } catch {
                close(error)
                for asked in unsent { asked.continuation.resume(throwing: error) }
            }
        }

        private mutating func sync(_ connection: OpaquePointer) throws(PostgresError) {
            inFlight.append(.sync)
            guard PQpipelineSync(connection) == 1 else { throw PostgresError.connectionFailed(connection) }
        }

        private mutating func flush(_ connection: OpaquePointer) throws(PostgresError) {
            switch PQflush(connection) {
            case 0: flushing = false
            case 1: flushing = true
            default: throw PostgresError.connectionFailed(connection)
            }
        }

        private mutating func open() throws(PostgresError) -> OpaquePointer {
            if let connection { return connection }
            let made = try PostgresConnection.connect(url: url)
            guard PQenterPipelineMode(made) == 1, PQsetnonblocking(made, 1) == 0 else {
                let error = PostgresError.connectionFailed(made)
                PQfinish(made)
                throw error
            }
            connection = made
            return made
        }

        /// Sends what libpq still holds, reads what arrived (`reading`: else only what libpq has
        /// read already), and answers each statement whose results are complete.
        private mutating func receive(reading: Bool = true) {
            guard let connection, !inFlight.isEmpty || reading else { return }
            do throws(PostgresError) {
                if reading {
                    if flushing { try flush(connection) }
                    guard PQconsumeInput(connection) == 1 else { throw PostgresError.connectionFailed(connection) }
                }
                // libpq gives a NULL after each statement's results; a third in a row would
                // mean nothing more has come, whatever `PQisBusy` says.
                var nulls = 0
                while !inFlight.isEmpty, PQisBusy(connection) == 0, nulls < 3 {
                    let pointer = PQgetResult(connection)
                    nulls = pointer == nil ? nulls + 1 : 0
                    if case .sync = inFlight[0] {
                        guard let pointer else { continue }
                        PQclear(pointer)
                        inFlight.removeFirst()
                        if let (asked, outcome) = committing {
                            committing = nil
                            asked.continuation.resume(with: outcome)
                        }
                        continue
                    }
                    guard let pointer else {
                        finishHead()
                        continue
                    }
                    let status = PQresultStatus(pointer)
                    if status == PGRES_PIPELINE_ABORTED {
                        PQclear(pointer)
                        headSkipped = true
                    } else if let error = PostgresResult.error(of: pointer, connection: connection) {
                        PQclear(pointer)
                        if errorOfHead == nil { errorOfHead = error }
                    } else {
                        resultOfHead = PostgresResult(pointer)
                    }
                }
            } catch {
                close(error)
            }
        }

        /// The head of `inFlight` has all its results (libpq gave its NULL).
        private mutating func finishHead() {
            let (result, error, skippedHead) = (resultOfHead, errorOfHead, headSkipped)
            (resultOfHead, errorOfHead, headSkipped) = (nil, nil, false)
            switch inFlight.removeFirst() {
            case .prepare(let sql):
                if let error {
                    prepared[sql] = nil
                    unpreparable[sql] = error
                }
            case .execute(let asked, let alone):
                let outcome: Result<PostgresResult, PostgresError>
                if let failure = unpreparable[asked.sql] {
                    outcome = .failure(failure)
                } else if let error {
                    outcome = .failure(error)
                } else if skippedHead {
                    skipped.append(asked) // an earlier statement of its batch failed
                    return
                } else if let result {
                    outcome = .success(result)
                } else {
                    outcome = .failure(PostgresError(sqlState: "", message: "no result"))
                }
                if alone { committing = (asked, outcome) } else { asked.continuation.resume(with: outcome) }
            case .sync:
                break
            }
        }

        /// Ends the connection: what is in flight or waiting to be sent again fails with `error`.
        private mutating func close(_ error: PostgresError) {
            PQfinish(connection)
            connection = nil
            prepared = [:]
            named = 0
            unpreparable = [:]
            flushing = false
            (resultOfHead, errorOfHead, headSkipped) = (nil, nil, false)
            for sent in inFlight { if case .execute(let asked, _) = sent { asked.continuation.resume(throwing: error) } }
            if let (asked, _) = committing { asked.continuation.resume(throwing: error) }
            committing = nil
            for asked in skipped { asked.continuation.resume(throwing: error) }
            inFlight = []
            skipped = []
        }
    }
}
