#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Logging

/// What every connection of a server shares.
final class ServerContext: Sendable {
    /// Its limits and timeouts can change while the server runs (`HTTPServer.updateLimits`):
    /// each connection reads them as it needs them.
    private let settings: Mutex<ServerConfiguration>
    var configuration: ServerConfiguration { settings.withLock { $0 } }
    let router: Router
    let metrics: ServerMetrics
    let accessLog: AccessLog
    let registry = ConnectionRegistry()

    init(configuration: ServerConfiguration, router: Router, metrics: ServerMetrics, logger: Logger) {
        self.settings = Mutex(configuration)
        self.router = router
        self.metrics = metrics
        self.accessLog = AccessLog(logger: logger)
    }

    func update(_ change: (inout ServerConfiguration) -> Void) {
        settings.withLock { change(&$0) }
    }
}

/// One HTTP/1.1 connection: reads requests, hands them to their routes, writes the answers
/// in order (pipelining), and enforces the limits and deadlines. Everything here runs on the
/// channel's serial context, except `deadline` (read by the sweep) and `respondLater`.
final class HTTPConnection: ChannelHandler, @unchecked Sendable {
    /// Where the current request stands on the input side.
    private enum Phase {
        /// Waiting for (the rest of) a head.
        case head
        /// Streaming the body into the route's sink.
        case body(any BodySink, limit: Int64)
        /// The route did not want the body: read and drop it.
        case discarding
        /// The whole request is read.
        case complete
        /// The request's input cannot be read to its end; the connection closes after the answer.
        case abandoned
    }

    /// The request being served, from its head to the last byte of its answer.
    private struct Exchange {
        var serial: UInt64
        var head: RequestHead?
        var id: RequestID
        var route: Int = -1
        var started: UInt64
        var bytesIn: Int64 = 0
        var responded = false
    }

    /// A response body still being sent after its head.
    private enum Streaming {
        case file(FileRegion, offset: Int64, remaining: Int64)
        case chunked(any ChunkedBodySource, terminate: Bool)
    }

    let channel: any Channel
    private let context: ServerContext
    private let rejecting: Bool
    private var decoder: RequestDecoder
    private let buffer: UnsafeMutableRawBufferPointer
    private var readStart = 0
    private var readEnd = 0
    private var output: [UInt8] = []
    private var outputSent = 0
    private var encoder = ResponseEncoder()
    private var phase: Phase = .head {
        didSet {
            // Keeps the uploads-in-progress gauge true on every way out of a body.
            switch (oldValue, phase) {
            case (.body, .body): break
            case (.body, _): context.metrics.bodyEnded()
            case (_, .body): context.metrics.bodyStarted()
            default: break
            }
        }
    }
    private var exchange: Exchange?
    private var streaming: Streaming?
    private var serial: UInt64 = 0
    private var discarded: Int64 = 0
    private var closeAfterResponse = false
    private var lingering = false
    private var closed = false
    private var headStarted: UInt64 = 0
    private var lastProgress: UInt64 = 0
    private var writeBlocked = false
    /// What was last asked of the channel.
    private var readInterest = false
    /// Set when an exchange ended while writing, so `process` decodes again.
    private var resumeDecoding = false
    /// Monotonic nanoseconds after which `checkDeadline` acts; 0 for none.
    let deadline = Atomic<UInt64>(0)

    init(channel: any Channel, context: ServerContext, rejecting: Bool) {
        self.channel = channel
        self.context = context
        self.rejecting = rejecting
        let configuration = context.configuration
        decoder = RequestDecoder(maxHeadBytes: configuration.maxHeadBytes)
        buffer = .allocate(byteCount: max(configuration.readBufferBytes, configuration.maxHeadBytes + 1), alignment: 16)
        output.reserveCapacity(4096)
        lastProgress = monotonicNanoseconds()
        headStarted = lastProgress
        updateDeadline(now: lastProgress)
    }

    deinit { buffer.deallocate() }

    // MARK: Channel callbacks

    func channelReadable() {
        // An edge-triggered backend announces input once: read until a short read shows the
        // socket drained. Bounded, so one fast sender cannot starve the loop's other sockets.
        for _ in 0..<16 {
            guard !closed, readOnce() else { return }
        }
        // More is waiting: ask to be called again after the others had their turn.
        channel.setReadInterest(false)
        updateInterest()
    }

    /// One read and what follows from it; true when the socket may hold more to read now.
    private func readOnce() -> Bool {
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
        switch Socket.read(channel.fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[readEnd...])) {
        case .bytes(let count):
            lastProgress = monotonicNanoseconds()
            if lingering {
                readStart = 0
                readEnd = 0
            } else {
                if decoder.isAtRequestBoundary && readStart == readEnd { headStarted = lastProgress }
                readEnd += count
                process()
            }
            return count == space && (readInterest || lingering)
        case .wouldBlock:
            return false
        case .endOfStream:
            peerClosedInput()
            return false
        case .failed:
            closeNow()
            return false
        }
    }

    func channelWritable() {
        guard !closed else { return }
        process()
    }

    func channelClosed() {
        closed = true
        if case .body(let sink, _) = phase { sink.abort() }
        phase = .abandoned
        streaming = nil
        deadline.store(0, ordering: .relaxed)
        context.registry.remove(self)
        context.metrics.connectionClosed()
    }

    // MARK: Requests

    /// Decodes and serves whatever the buffer holds, then writes and sets interest.
    private func process() {
        repeat {
            resumeDecoding = false
            decodeAvailable()
            flush()
        } while resumeDecoding && !closed
        updateInterest()
    }

    private func decodeAvailable() {
        decoding: while !closed {
            switch phase {
            case .head:
                guard exchange == nil, !closeAfterResponse else { break decoding }
                guard let step = decodeStep() else { return }
                switch step.event {
                case .head(let head):
                    readStart += step.consumed
                    begin(head)
                case .needMore:
                    readStart += step.consumed
                    if step.consumed == 0 { break decoding }
                case .body, .end:
                    preconditionFailure("body event before a head")
                }
            case .body(let sink, let limit):
                guard let step = decodeStep() else { return }
                switch step.event {
                case .body(let range):
                    exchange?.bytesIn += Int64(range.count)
                    if let bytesIn = exchange?.bytesIn, bytesIn > limit {
                        fail(.payloadTooLarge("the body exceeds \(limit) bytes"))
                        return
                    }
                    do throws(HTTPError) {
                        try sink.receive(UnsafeRawBufferPointer(rebasing: buffer[(readStart + range.lowerBound)..<(readStart + range.upperBound)]))
                    } catch {
                        fail(error)
                        return
                    }
                    readStart += step.consumed
                case .end:
                    readStart += step.consumed
                    phase = .complete
                    if let exchange, let response = sink.finish(responder: Responder(connection: self, serial: exchange.serial)) {
                        respond(response)
                    }
                case .needMore:
                    readStart += step.consumed
                    if step.consumed == 0 { break decoding }
                case .head:
                    preconditionFailure("head event inside a body")
                }
            case .discarding:
                guard let step = decodeStep() else { return }
                readStart += step.consumed
                switch step.event {
                case .body(let range):
                    exchange?.bytesIn += Int64(range.count)
                    discarded += Int64(range.count)
                    if discarded > context.configuration.maxDiscardBytes {
                        closeAfterResponse = true
                        phase = .abandoned
                    }
                case .end:
                    phase = .complete
                    finishIfDone()
                case .needMore:
                    if step.consumed == 0 { break decoding }
                case .head:
                    preconditionFailure("head event inside a body")
                }
            case .complete:
                guard exchange == nil else { break decoding }
                phase = .head
            case .abandoned:
                break decoding
            }
        }
    }

    private func decodeStep() -> (event: RequestDecoder.Event, consumed: Int)? {
        do throws(HTTPError) {
            return try decoder.next(UnsafeRawBufferPointer(rebasing: buffer[readStart..<readEnd]))
        } catch {
            fail(error)
            return nil
        }
    }

    /// Routes a new request and starts the handler.
    private func begin(_ head: RequestHead) {
        serial += 1
        discarded = 0
        let id = head.headers.withFirstValueBytes("x-request-id") { RequestID.fromClient($0) } ?? nil
        exchange = Exchange(serial: serial, head: head, id: id ?? RequestID.next(), started: monotonicNanoseconds())
        if rejecting || context.configuration.maxConnections <= 0 {
            fail(.unavailable("too many connections", retryAfterSeconds: context.configuration.retryAfterSeconds))
            return
        }
        let result: HandlerResult
        switch context.router.match(head.method, head.path) {
        case .notFound:
            result = .response(.error(.notFound("no route for \(head.path)")))
        case .methodNotAllowed(let allowed):
            result = .response(.error(.methodNotAllowed(allowed: allowed)))
        case .found(let route, let parameters):
            exchange?.route = route.index
            if let length = head.contentLength, length > route.bodyLimit {
                // Refused before reading, so a client waiting on 100-continue never sends it.
                result = .response(.error(.payloadTooLarge("the body of \(length) bytes exceeds \(route.bodyLimit)")))
            } else {
                let request = Request(head: head, id: exchange!.id, route: route, parameterValues: parameters)
                result = route.handler.handle(request, responder: Responder(connection: self, serial: serial))
            }
        }
        switch result {
        case .readBody(let sink, let limit):
            phase = .body(sink, limit: limit)
            if head.expectsContinue { output.append(ascii: "HTTP/1.1 100 Continue\r\n\r\n") }
        case .response(let response):
            skipBody(of: head)
            respond(response)
        case .deferred:
            skipBody(of: head)
        }
    }

    /// The handler will not read the body: drop a small one, else close after answering
    /// (also when the client waits for a 100 Continue that will not come).
    private func skipBody(of head: RequestHead) {
        switch head.framing {
        case .none, .length(0):
            phase = .discarding // consumes the end of the request
        case .length(let length) where !head.expectsContinue && length <= context.configuration.maxDiscardBytes:
            phase = .discarding
        case .chunked where !head.expectsContinue:
            phase = .discarding // bounded by maxDiscardBytes as it goes
        default:
            phase = .abandoned
            closeAfterResponse = true
        }
    }

    /// Answers with an error and closes: the input can no longer be trusted or read.
    private func fail(_ error: HTTPError) {
        if case .body(let sink, _) = phase { sink.abort() }
        phase = .abandoned
        closeAfterResponse = true
        if exchange == nil {
            serial += 1
            exchange = Exchange(serial: serial, head: nil, id: RequestID.next(), started: headStarted)
        }
        if exchange?.responded == false {
            respond(.error(error))
        }
        process()
    }

    /// Called through `Responder` from any thread.
    func respondLater(serial: UInt64, _ response: Response) {
        channel.execute { [self] in
            guard !closed, let exchange, exchange.serial == serial, !exchange.responded else { return }
            respond(response)
            process()
        }
    }

    /// Queues the answer of the current exchange.
    private func respond(_ response: Response) {
        guard var current = exchange, !current.responded else { return }
        current.responded = true
        let head = current.head
        let isHead = head?.method == .head
        let keepAlive = (head?.keepAlive ?? false) && !closeAfterResponse && !rejecting && !context.registry.isShuttingDown
        if !keepAlive { closeAfterResponse = true }
        let headStart = output.count
        let routeHeaders = current.route >= 0 ? context.router.routes[current.route].headers : []
        let sendsBody = encoder.encodeHead(response, requestID: current.id,
                                           framing: .init(keepAlive: keepAlive, version: head?.version ?? .http11, isHeadRequest: isHead),
                                           routeHeaders: routeHeaders, into: &output)
        var bodyBytes: Int64 = 0
        if sendsBody {
            switch response.body {
            case .empty:
                break
            case .bytes(let bytes):
                output.append(contentsOf: bytes)
                bodyBytes = Int64(bytes.count)
            case .file(let region):
                streaming = .file(region, offset: region.offset, remaining: region.length)
                bodyBytes = region.length
            case .chunked(let source):
                streaming = .chunked(source, terminate: head?.version != .http10)
            }
        }
        let now = monotonicNanoseconds()
        let elapsed = now &- current.started
        context.metrics.record(route: current.route, status: response.status.code, bytesIn: current.bytesIn, nanoseconds: elapsed)
        context.accessLog.write(.init(id: current.id, method: head?.methodName ?? "-", path: head?.path ?? "-",
                                      status: response.status.code, bytesIn: current.bytesIn,
                                      bytesOut: Int64(output.count - headStart) + bodyBytes, nanoseconds: elapsed))
        exchange = current
        finishIfDone()
    }

    /// Ends the exchange once the request is read and the answer is queued whole.
    private func finishIfDone() {
        guard let current = exchange, current.responded, streaming == nil else { return }
        switch phase {
        case .complete, .abandoned:
            exchange = nil
            if case .complete = phase {
                phase = .head
                headStarted = monotonicNanoseconds()
            }
            if context.registry.isShuttingDown { closeAfterResponse = true }
        default:
            break
        }
    }

    // MARK: Output

    /// Writes queued output, then any streaming body, until done or the socket is full.
    private func flush() {
        while !closed {
            if outputSent < output.count {
                let result = output.withUnsafeBytes { Socket.write(channel.fd, UnsafeRawBufferPointer(rebasing: $0[outputSent...])) }
                switch result {
                case .bytes(let count):
                    outputSent += count
                    lastProgress = monotonicNanoseconds()
                case .wouldBlock:
                    blockOnWrite()
                    return
                case .endOfStream, .failed:
                    closeNow()
                    return
                }
                continue
            }
            output.removeAll(keepingCapacity: true)
            outputSent = 0
            guard let body = streaming else { break }
            switch body {
            case .file(let region, var offset, let remaining):
                switch Socket.sendFile(channel.fd, file: region.fd, offset: &offset, count: Int(min(remaining, 1 << 20))) {
                case .bytes(let count):
                    lastProgress = monotonicNanoseconds()
                    streaming = remaining - Int64(count) > 0 ? .file(region, offset: offset, remaining: remaining - Int64(count)) : nil
                    if streaming == nil { streamingEnded() }
                case .wouldBlock:
                    blockOnWrite()
                    return
                case .endOfStream, .failed:
                    closeNow() // the file changed under us: the length already sent cannot be kept
                    return
                }
            case .chunked(let source, let terminate):
                do {
                    if let chunk = try source.nextChunk() {
                        guard !chunk.isEmpty else { continue }
                        if terminate {
                            output.append(hex: UInt64(chunk.count))
                            output.append(ascii: "\r\n")
                        }
                        output.append(contentsOf: chunk)
                        if terminate { output.append(ascii: "\r\n") }
                    } else {
                        if terminate { output.append(ascii: "0\r\n\r\n") } else { closeAfterResponse = true }
                        streaming = nil
                        streamingEnded()
                    }
                } catch {
                    closeNow() // the head is sent: the only honest signal left is an unfinished body
                    return
                }
            }
        }
        guard !closed else { return }
        if writeBlocked {
            writeBlocked = false
            channel.setWriteInterest(false)
        }
        if closeAfterResponse && exchange == nil { closeGracefully() }
    }

    /// A streamed body is out: the exchange may end, and requests that arrived meanwhile
    /// are already in the buffer, where no read event will announce them.
    private func streamingEnded() {
        finishIfDone()
        resumeDecoding = exchange == nil
    }

    private func blockOnWrite() {
        if !writeBlocked {
            writeBlocked = true
            channel.setWriteInterest(true)
        }
        updateDeadline(now: monotonicNanoseconds())
    }

    // MARK: Interest, deadlines, closing

    private func updateInterest() {
        guard !closed else { return }
        let wantsInput: Bool
        switch phase {
        case .head: wantsInput = exchange == nil && !closeAfterResponse
        case .body, .discarding: wantsInput = true
        case .complete, .abandoned: wantsInput = false
        }
        // Stop reading while a large answer is still going out (pipelining back-pressure).
        let backlogged = output.count - outputSent > 256 * 1024
        // channelReadable makes room by moving unparsed bytes to the front.
        let hasRoom = readEnd - readStart < buffer.count
        readInterest = (wantsInput && !backlogged && hasRoom) || lingering
        channel.setReadInterest(readInterest)
        updateDeadline(now: monotonicNanoseconds())
    }

    private func updateDeadline(now: UInt64) {
        let configuration = context.configuration
        let milliseconds: Int
        var from = lastProgress
        if lingering {
            return // set once when lingering began
        } else if writeBlocked {
            milliseconds = configuration.sendTimeoutMilliseconds
        } else {
            switch phase {
            case .head where exchange == nil:
                if readStart < readEnd || !decoder.isAtRequestBoundary {
                    milliseconds = configuration.headerTimeoutMilliseconds
                    from = headStarted
                } else {
                    milliseconds = configuration.idleTimeoutMilliseconds
                }
            case .body, .discarding:
                milliseconds = configuration.bodyTimeoutMilliseconds
            default:
                deadline.store(0, ordering: .relaxed) // the handler's turn: no deadline of ours
                return
            }
        }
        deadline.store(from + UInt64(milliseconds) * 1_000_000, ordering: .relaxed)
    }

    /// Called by the sweep when `deadline` has passed.
    func checkDeadline() {
        guard !closed else { return }
        let now = monotonicNanoseconds()
        let due = deadline.load(ordering: .relaxed)
        guard due != 0, due <= now else { return }
        if lingering || writeBlocked {
            closeNow()
            return
        }
        switch phase {
        case .head where exchange == nil:
            if readStart < readEnd || !decoder.isAtRequestBoundary {
                fail(.requestTimeout("the request head did not arrive in time"))
            } else {
                closeNow() // idle keep-alive connection
            }
        case .body, .discarding:
            fail(.requestTimeout("the request body stalled"))
        default:
            break
        }
    }

    /// Server shutdown: close when idle, else after the answer in progress.
    func beginShutdown() {
        guard !closed else { return }
        closeAfterResponse = true
        if lingering || (exchange == nil && readStart == readEnd && decoder.isAtRequestBoundary) {
            closeNow()
        } else {
            updateInterest()
        }
    }

    private func peerClosedInput() {
        if lingering {
            closeNow()
            return
        }
        switch phase {
        case .head where exchange == nil && outputSent == output.count:
            closeNow()
        case .body, .discarding:
            closeNow() // the body will never be whole; the sink is aborted on close
        default:
            // The answer may still be wanted (a half-closed client): send it, then close.
            closeAfterResponse = true
            phase = .abandoned
            readInterest = false
            channel.setReadInterest(false)
        }
    }

    /// Closes after the answer. When the client may still be sending (an unread body or
    /// pipelined bytes), half-close and read for a while first, so the client reads our answer
    /// instead of a reset (RFC 9112 §9.6).
    private func closeGracefully() {
        let inputPending = readStart < readEnd || !decoder.isAtRequestBoundary
        guard inputPending, !lingering else {
            if !lingering { closeNow() }
            return
        }
        lingering = true
        Socket.shutdownWrite(channel.fd)
        readStart = 0
        readEnd = 0
        deadline.store(monotonicNanoseconds() + UInt64(context.configuration.lingerTimeoutMilliseconds) * 1_000_000, ordering: .relaxed)
        readInterest = true
        channel.setReadInterest(true)
    }

    private func closeNow() {
        guard !closed else { return }
        // Nothing touches the descriptor from here on, even before channelClosed arrives.
        closed = true
        channel.close()
    }
}
