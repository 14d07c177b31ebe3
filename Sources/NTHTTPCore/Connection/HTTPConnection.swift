#if canImport(Glibc)
import Glibc
#endif
import NTLogging
import Synchronization

/// One HTTP/1.1 connection's I/O: reads the socket into its buffer, decodes requests, feeds
/// what happened to its `ConnectionStateMachine` and carries out the actions it returns:
/// starts each request's handler task, moves body bytes into the handler's stream, queues the
/// answer in its `ResponseWriter` and writes it. It decides nothing itself. Everything here
/// runs on the channel's serial context (checked in debug builds) except `deadline`, read by
/// the sweep, and the hops onto the context from handler tasks.
final class HTTPConnection: ChannelHandler, InterimSink, @unchecked Sendable {
    /// The request in flight.
    private struct Current {
        var serial: UInt64
        var id: RequestID
        var head: RequestHead
        var route: Route?
        var stream: BodyStream?
    }

    let channel: any Channel
    private let context: ServerContext
    /// Why every request of this connection is refused with 503 (past a connection limit).
    private let rejection: String?
    private var machine: ConnectionStateMachine
    private var decoder: RequestDecoder
    private let buffer: UnsafeMutableRawBufferPointer
    private var readStart = 0
    private var readEnd = 0
    private var writer = ResponseWriter()
    private var current: Current?
    private var serial: UInt64 = 0
    private var closed = false
    /// What was last asked of the channel (starting a channel turns reading on).
    private var readInterest = true
    private var countedAsReceivingBody = false
    /// Set when an exchange ended, so `process` decodes what the buffer holds next.
    private var decodeAgain = false
    /// Monotonic nanoseconds after which `checkDeadline` acts; 0 for none.
    let deadline = Atomic<UInt64>(0)

    /// The peer's address bytes (4 for IPv4, 16 for IPv6; empty when unknown).
    private let peerAddress: [UInt8]

    init(channel: any Channel, context: ServerContext, rejection: String?, peerAddress: [UInt8]?) {
        self.channel = channel
        self.context = context
        self.rejection = rejection
        self.peerAddress = peerAddress ?? []
        let configuration = context.configuration
        decoder = RequestDecoder(maxHeadBytes: configuration.maxHeadBytes)
        buffer = .allocate(byteCount: max(configuration.readBufferBytes, configuration.maxHeadBytes + 1), alignment: 16)
        machine = ConnectionStateMachine(now: monotonicNanoseconds())
        updateDeadline()
    }

    deinit { buffer.deallocate() }

    // MARK: Channel callbacks

    func channelReadable() {
        channel.assertOnContext()
        // An edge-triggered backend announces input once: read until a short read shows the
        // socket drained. Bounded, so one fast sender cannot starve the loop's other sockets.
        for _ in 0..<16 {
            guard !closed, readInterest, readOnce() else { return }
        }
        // More is waiting: ask to be called again after the others had their turn.
        channel.setReadInterest(false)
        readInterest = false
        updateInterest()
    }

    /// One read and what follows from it; true when the socket may hold more to read now.
    private func readOnce() -> Bool {
        if readStart == readEnd, machine.isStreamingBody, let stream = current?.stream, let ahead = decoder.plainBodyBytesAhead {
            return readBody(into: stream, ahead: ahead)
        }
        if readStart == readEnd {
            readStart = 0
            readEnd = 0
        } else if readStart > 0 && readEnd == buffer.count {
            // Move the unparsed tail to the front to make room.
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + readStart, byteCount: readEnd - readStart)
            readEnd -= readStart
            readStart = 0
        }
        guard readEnd < buffer.count else {
            updateInterest()
            return false
        }
        let space = buffer.count - readEnd
        return afterRead(Socket.read(channel.fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[readEnd...])), space: space) { count in
            if case .lingering = machine.state {
                readStart = 0
                readEnd = 0
                return
            }
            if readStart == readEnd { machine.headBegan(now: monotonicNanoseconds()) }
            readEnd += count
        }
    }

    /// Reads body bytes straight into a buffer of the body's pool, which the stream then takes
    /// as it is: no copy out of the read buffer. Only bytes with no framing among them.
    private func readBody(into stream: BodyStream, ahead: Int64) -> Bool {
        let chunk = stream.makeChunk()
        let space = Int(min(Int64(chunk.room), ahead))
        return afterRead(chunk.fill(upTo: space, { Socket.read(channel.fd, into: $0) }), space: space) { count in
            decoder.consumeBody(count)
            bodyReceived(count) { stream.append(chunk, highWatermark: $0) }
        }
    }

    /// What follows a read: `received` takes the bytes, then they are processed. True when the
    /// socket may hold more to read now (the read filled `space`).
    private func afterRead(_ result: Socket.IOResult, space: Int, _ received: (Int) -> Void) -> Bool {
        switch result {
        case .bytes(let count):
            received(count)
            process()
            return count == space
        case .wouldBlock:
            return false
        case .endOfStream:
            perform(machine.peerClosed())
            process()
            return false
        case .failed:
            closeNow()
            return false
        }
    }

    func channelWritable() {
        channel.assertOnContext()
        guard !closed else { return }
        process()
    }

    func channelClosed() {
        closed = true
        machine.closed()
        current?.stream?.fail(.clientClosed)
        current = nil
        setReceivingBody(false)
        deadline.store(0, ordering: .relaxed)
        context.registry.remove(self)
        context.metrics.connectionClosed()
    }

    // MARK: The loop of work

    /// Decodes what the buffer holds, writes what is queued, and sets interest and deadline.
    private func process() {
        repeat {
            decodeAgain = false
            decodeAvailable()
            flush()
        } while decodeAgain && !closed
        updateInterest()
    }

    private func decodeAvailable() {
        decoding: while !closed {
            switch machine.decoding {
            case .nothing:
                break decoding
            case .head:
                guard let step = decodeStep() else { return }
                readStart += step.consumed
                switch step.event {
                case .head(let head):
                    begin(head)
                case .needMore:
                    if step.consumed == 0 { break decoding }
                case .body, .end:
                    preconditionFailure("body event before a head")
                }
            case .body:
                guard let step = decodeStep() else { return }
                switch step.event {
                case .body(let range):
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[(readStart + range.lowerBound)..<(readStart + range.upperBound)])
                    readStart += step.consumed
                    bodyReceived(bytes.count) { current?.stream?.append(bytes, highWatermark: $0) ?? true }
                case .end:
                    readStart += step.consumed
                    perform(machine.bodyEnded(now: monotonicNanoseconds()))
                case .needMore:
                    readStart += step.consumed
                    if step.consumed == 0 { break decoding }
                case .head:
                    preconditionFailure("head event inside a body")
                }
            }
        }
    }

    private func decodeStep() -> (event: RequestDecoder.Event, consumed: Int)? {
        do throws(HTTPError) {
            return try decoder.next(UnsafeRawBufferPointer(rebasing: buffer[readStart..<readEnd]))
        } catch {
            perform(machine.parseFailed(error))
            return nil
        }
    }

    /// Routes a new request and starts its handler task.
    private func begin(_ head: RequestHead) {
        serial += 1
        let now = monotonicNanoseconds()
        let id = head.headers.withFirstValueBytes("x-request-id") { RequestID.fromClient($0) } ?? nil
        let routing = context.routing(head, rejection: rejection)
        let route = routing.route, refusal = routing.refusal
        let stream = head.framing.hasBody ? makeStream(serial: serial) : nil
        current = Current(serial: serial, id: id ?? RequestID.next(), head: head, route: route, stream: stream)
        var summary = HeadSummary(head, bodyLimit: route?.bodyLimit ?? 0)
        summary.keepAlive = summary.keepAlive && rejection == nil // a connection past a limit closes after its 503
        _ = machine.headReceived(summary, refused: refusal != nil, now: now)
        var request = Request(head: head, id: current!.id, body: RequestBody(stream: stream), route: route, parameterValues: routing.parameters,
                              peerAddress: peerAddress, receivedAt: now)
        request.attributes[Refusal.self] = refusal
        let serial = self.serial
        request.interim = InterimSender(sink: self, serial: serial)
        let respond: @Sendable () async -> Void = { [context, channel, request] in
            let response = await context.respond(to: request)
            channel.execute { self.responseArrived(serial: serial, response) }
        }
        // A handler that never waits runs on this loop, at once, up to its first suspension
        // (its answer still comes back through `execute`, after this callback): no thread hop
        // either way.
        if refusal == nil && route?.inline == true {
            Task.immediate(executorPreference: channel.executor, operation: respond)
        } else {
            Task(executorPreference: context.handlers, operation: respond)
        }
    }

    private func makeStream(serial: UInt64) -> BodyStream {
        BodyStream(budget: context.bodyBudget, buffers: context.bodyBuffers) { [weak self] in
            guard let self else { return }
            channel.execute { self.bodyDemanded(serial: serial) }
        }
    }

    /// Body bytes arrived: `deliver` hands them to the handler's stream (told the stream's
    /// high watermark; false: the stream is full) when the machine says so.
    private func bodyReceived(_ count: Int, deliver: (_ highWatermark: Int) -> Bool) {
        let configuration = context.configuration
        for action in machine.bodyReceived(count, now: monotonicNanoseconds(), maxDiscardBytes: configuration.maxDiscardBytes) {
            guard action == .deliverBody else {
                perform([action])
                continue
            }
            if !deliver(configuration.bodyHighWatermark(bodiesInProgress: context.metrics.bodiesInProgress)) { machine.bodyPaused() }
        }
    }

    /// The handler asked for the body, or its stream has room again.
    private func bodyDemanded(serial: UInt64) {
        channel.assertOnContext()
        guard !closed, current?.serial == serial else { return }
        perform(machine.bodyDemanded(now: monotonicNanoseconds()))
        process()
    }

    /// An interim answer of the handler, sent from its task.
    func interim(serial: UInt64, _ status: HTTPStatus, headers: [HTTPField]) {
        channel.execute { self.interimArrived(serial: serial, status, headers: headers) }
    }

    /// An interim answer of the handler, back on the connection's context: written unless the
    /// final answer went out already (both hop through the same serial context, in order), and
    /// never to an HTTP/1.0 request (RFC 9110 §15.2: it may not understand one).
    private func interimArrived(serial: UInt64, _ status: HTTPStatus, headers: [HTTPField]) {
        channel.assertOnContext()
        guard !closed, let request = current, request.serial == serial, request.head.version != .http10, machine.acceptsInterim else { return }
        writer.writeInterim(status, headers: headers)
        flush()
    }

    /// The handler's answer, back on the connection's context.
    private func responseArrived(serial: UInt64, _ response: Response) {
        channel.assertOnContext()
        guard !closed, let request = current, request.serial == serial else { return }
        let configuration = context.configuration
        // HTTP/1.0 has no chunked coding: such a body ends with the connection.
        var closes = false
        if case .chunked = response.body, request.head.version == .http10 { closes = true }
        for action in machine.responseReady(now: monotonicNanoseconds(), maxDiscardBytes: configuration.maxDiscardBytes, closes: closes) {
            guard case .writeResponse(let keepAlive) = action else {
                perform([action])
                continue
            }
            // Whatever the handler left of its body is dropped, never read by anyone.
            request.stream?.close()
            let routeHeaders = request.route?.headers ?? []
            _ = writer.write(response, requestID: request.id,
                             framing: .init(keepAlive: keepAlive, version: request.head.version, isHeadRequest: request.head.method == .head),
                             routeHeaders: routeHeaders)
            if !writer.isStreamingBody { perform(machine.responseSent(now: monotonicNanoseconds())) }
        }
        process()
    }

    /// Carries out actions that need nothing but the connection.
    private func perform(_ actions: [ConnectionStateMachine.Action]) {
        for action in actions {
            switch action {
            case .startRequest, .deliverBody, .writeResponse:
                preconditionFailure("\(action) is carried out where it arises")
            case .dropBody:
                break
            case .sendContinue:
                writer.writeContinue()
            case .finishBody:
                current?.stream?.finish()
            case .failBody(let error):
                current?.stream?.fail(error)
            case .writeError(let error):
                writeHeadless(error)
            case .exchangeDone:
                current = nil
                if readStart < readEnd { machine.headBegan(now: monotonicNanoseconds()) }
                decodeAgain = true
            case .linger:
                Socket.shutdownWrite(channel.fd)
                readStart = 0
                readEnd = 0
            case .close:
                closeNow()
            }
        }
    }

    /// Answers a request that never reached a handler (its head is malformed or late).
    private func writeHeadless(_ error: HTTPError) {
        let id = RequestID.next()
        let now = monotonicNanoseconds()
        let response = Response.error(error)
        let bytes = writer.write(response, requestID: id, framing: .init(keepAlive: false, version: .http11, isHeadRequest: false), routeHeaders: [])
        if case .readingHead(let since) = machine.state {
            context.middleware.record(headless: error.status.code, id: id, started: since, bytesOut: bytes, now: now)
        } else {
            context.middleware.record(headless: error.status.code, id: id, started: now, bytesOut: bytes, now: now)
        }
    }

    // MARK: Output

    private func flush() {
        guard !closed else { return }
        switch writer.flush(channel.fd) {
        case .failed:
            closeNow()
            return
        case .blocked:
            machine.outputBlocked(now: monotonicNanoseconds())
            channel.setWriteInterest(true)
            if writer.finishedStreamedBody { perform(machine.responseSent(now: monotonicNanoseconds())) }
            return
        case .empty:
            channel.setWriteInterest(false)
            if writer.finishedStreamedBody { perform(machine.responseSent(now: monotonicNanoseconds())) }
            guard !closed else { return }
            let inputPending = readStart < readEnd || !decoder.isAtRequestBoundary
            perform(machine.outputFlushed(inputPending: inputPending, now: monotonicNanoseconds()))
        }
    }

    // MARK: Interest, deadlines, closing

    private func updateInterest() {
        guard !closed else { return }
        // Stop reading while a large answer is still going out (pipelining back-pressure).
        let backlogged = writer.backlog > 256 * 1024
        // channelReadable makes room by moving unparsed bytes to the front.
        let hasRoom = readEnd - readStart < buffer.count
        readInterest = machine.wantsInput && !backlogged && hasRoom
        channel.setReadInterest(readInterest)
        setReceivingBody(machine.isReceivingBody)
        updateDeadline()
    }

    /// Keeps the uploads-in-progress gauge (and each body's share of the memory budget) true.
    private func setReceivingBody(_ receiving: Bool) {
        guard receiving != countedAsReceivingBody else { return }
        countedAsReceivingBody = receiving
        if receiving { context.metrics.bodyStarted() } else { context.metrics.bodyEnded() }
    }

    private func updateDeadline() {
        deadline.store(machine.deadline(context.configuration.timeouts) ?? 0, ordering: .relaxed)
    }

    /// Called by the sweep when `deadline` has passed.
    func checkDeadline() {
        channel.assertOnContext()
        guard !closed else { return }
        perform(machine.deadlineReached(now: monotonicNanoseconds(), context.configuration.timeouts))
        process()
    }

    /// Server shutdown: close when idle, else after the answer in progress.
    func beginShutdown() {
        channel.assertOnContext()
        guard !closed else { return }
        perform(machine.shutdown())
        process()
    }

    private func closeNow() {
        guard !closed else { return }
        // Nothing touches the descriptor from here on, even before channelClosed arrives.
        closed = true
        machine.closed()
        channel.close()
    }
}
