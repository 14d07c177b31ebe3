/// The life of one HTTP/1.1 connection as a value: when it reads, when a request starts, where
/// body bytes go, when the answer may be written and when the connection closes. It touches no
/// socket and no clock: the I/O shell (`HTTPConnection`) feeds it what happened (a head, body
/// bytes, the handler's answer, a finished write, a deadline, a shutdown) with the time, and
/// carries out the actions it returns. One request is in flight at a time; pipelined requests
/// wait in the read buffer (or the kernel) until the exchange before them is over, so answers
/// keep their order (NIO's `HTTPServerPipelineHandler`).
struct ConnectionStateMachine: Sendable {
    enum State: Equatable, Sendable {
        /// Between requests, nothing of a next one seen: the idle timeout runs.
        case idle(since: UInt64)
        /// Bytes of a head arrived, not all of it: the header timeout runs from the first.
        case readingHead(since: UInt64)
        /// A request, from its head to the end of its answer.
        case exchange(Exchange)
        /// Answered; the connection closes once the output is written. `linger`: the client may
        /// still be sending, so read and drop for a while before closing (RFC 9112 §9.6).
        case closingAfterOutput(linger: Bool)
        /// Half-closed: reading and dropping until the client closes or the linger time ends.
        case lingering(since: UInt64)
        case closed
    }

    struct Exchange: Equatable, Sendable {
        var input: Input
        var output: Output
        /// Another request may follow this one on the connection.
        var keepAlive: Bool
        var expectsContinue: Bool
        /// The body's length when it has one (nil: chunked, or none).
        var contentLength: Int64?
        var bodyLimit: Int64
        var bytesIn: Int64 = 0
        /// When the body last moved, for the body timeout.
        var lastProgress: UInt64
        /// Since when, and how many bytes, the body has been read without our holding it back:
        /// for the minimum body rate (a byte every 25 s moves, but is no upload).
        var rateSince: UInt64
        var rateBytes: Int64 = 0

        /// The body moves again from `now` after a start or a pause of ours.
        mutating func restartClocks(_ now: UInt64) {
            lastProgress = now
            rateSince = now
            rateBytes = 0
        }
    }

    /// Where the request's input stands.
    enum Input: Equatable, Sendable {
        /// The body waits until the handler asks for it (it sent `Expect: 100-continue`, or it
        /// was refused before its handler ran): nothing of it is read.
        case awaitingDemand
        /// Body bytes go to the handler's stream.
        case streaming
        /// The handler's stream is full: nothing is read until it has room again.
        case paused
        /// The handler answered without the rest of the body: read and drop it.
        case discarding(dropped: Int64)
        /// The request is read to its end.
        case complete
        /// The rest of the input will not be read: the connection closes after the answer.
        case abandoned
    }

    enum Output: Equatable, Sendable {
        case awaitingResponse
        /// The head is queued; the body (a file, a chunked stream) is still going out.
        case sending
        /// All of the answer is queued for writing.
        case sent
    }

    enum Action: Equatable, Sendable {
        /// A head is decoded: run its handler (refusals answer through the same path).
        case startRequest
        /// Hand the decoded body bytes to the handler's stream.
        case deliverBody
        /// Drop the decoded body bytes.
        case dropBody
        /// Write `100 Continue`: the handler asked for a body the client holds back for it.
        case sendContinue
        /// The body is whole: end the handler's stream.
        case finishBody
        /// The body will not be whole: end the handler's stream with this error (its handler
        /// answers; the connection closes after that).
        case failBody(HTTPError)
        /// Queue the handler's answer, saying whether the connection stays open.
        case writeResponse(keepAlive: Bool)
        /// Answer a request that reached no handler (a malformed or late head) and close.
        case writeError(HTTPError)
        /// The exchange is over: decode whatever the buffer holds next.
        case exchangeDone
        /// Half-close and read and drop for the linger time.
        case linger
        /// Close now.
        case close
    }

    /// Which bytes the shell may decode now.
    enum Decoding: Equatable, Sendable {
        case head
        case body
        case nothing
    }

    private(set) var state: State
    private(set) var isShuttingDown = false
    /// Since when the writer could not write what it holds (the client reads nothing).
    private var outputBlockedSince: UInt64?

    init(now: UInt64) {
        state = .idle(since: now)
    }

    // MARK: What the shell asks

    /// Whether the socket should be read now.
    var wantsInput: Bool {
        switch state {
        case .idle, .readingHead, .lingering: return true
        case .exchange(let exchange):
            switch exchange.input {
            case .streaming, .discarding: return true
            case .awaitingDemand, .paused, .complete, .abandoned: return false
            }
        case .closingAfterOutput, .closed: return false
        }
    }

    var decoding: Decoding {
        switch state {
        case .idle, .readingHead: return .head
        case .exchange(let exchange):
            switch exchange.input {
            case .streaming, .discarding: return .body
            default: return .nothing
            }
        default: return .nothing
        }
    }

    /// Whether body bytes go to the handler now (not discarded, not held back).
    var isStreamingBody: Bool {
        guard case .exchange(let exchange) = state else { return false }
        return exchange.input == .streaming
    }

    /// Whether a request is being served (its handler may still answer).
    var isServingRequest: Bool {
        if case .exchange = state { return true }
        return false
    }

    /// Whether an interim (1xx) answer may go out now: a request is served and its final
    /// answer has not been queued.
    var acceptsInterim: Bool {
        guard case .exchange(let exchange) = state else { return false }
        return exchange.output == .awaitingResponse
    }

    /// Whether a request body is being received (the uploads-in-progress gauge).
    var isReceivingBody: Bool {
        guard case .exchange(let exchange) = state else { return false }
        switch exchange.input {
        case .streaming, .paused, .discarding: return true
        default: return false
        }
    }

    /// When `deadlineReached` must next be called; nil for none (the handler's turn, or closed).
    func deadline(_ timeouts: Timeouts) -> UInt64? {
        if let blocked = outputBlockedSince {
            return blocked + timeouts.send
        }
        switch state {
        case .idle(let since): return since + timeouts.idle
        case .readingHead(let since): return since + timeouts.header
        case .exchange(let exchange):
            switch exchange.input {
            case .streaming, .discarding:
                let stalled = exchange.lastProgress + timeouts.body
                guard timeouts.minBodyBytesPerSecond > 0 else { return stalled }
                // After the body timeout's grace, at least the minimum rate on average.
                let earned = UInt64(exchange.rateBytes).multipliedReportingOverflow(by: 1_000_000_000 / timeouts.minBodyBytesPerSecond)
                let slow = earned.overflow ? nil : (exchange.rateSince + timeouts.body).addingReportingOverflow(earned.partialValue)
                guard let slow, !slow.overflow else { return stalled }
                return min(stalled, slow.partialValue)
            default: return nil
            }
        case .lingering(let since): return since + timeouts.linger
        case .closingAfterOutput, .closed: return nil
        }
    }

    /// The timeouts in nanoseconds (they can change while the server runs).
    struct Timeouts: Equatable, Sendable {
        var header: UInt64
        var idle: UInt64
        var body: UInt64
        var send: UInt64
        var linger: UInt64
        /// The least a body must average once the body timeout's grace is over (0: no minimum).
        var minBodyBytesPerSecond: UInt64 = 0
    }

    // MARK: Input side

    /// Bytes arrived while no request was in progress: a head has begun.
    mutating func headBegan(now: UInt64) {
        if case .idle = state { state = .readingHead(since: now) }
    }

    /// A whole head. `refused`: the answer is known without the handler (too large, over the
    /// connection limit), so the body is not wanted unless that answer asks for it.
    mutating func headReceived(_ head: HeadSummary, refused: Bool, now: UInt64) -> [Action] {
        switch state {
        case .idle, .readingHead:
            break
        default:
            preconditionFailure("a head decoded in state \(state)")
        }
        let input: Input = head.hasBody && (head.expectsContinue || refused) ? .awaitingDemand : .streaming
        state = .exchange(Exchange(input: input, output: .awaitingResponse, keepAlive: head.keepAlive && !isShuttingDown,
                                   expectsContinue: head.expectsContinue, contentLength: head.contentLength,
                                   bodyLimit: head.bodyLimit, lastProgress: now, rateSince: now))
        return [.startRequest]
    }

    /// Decoded body bytes (or bytes of a body being discarded).
    mutating func bodyReceived(_ count: Int, now: UInt64, maxDiscardBytes: Int64) -> [Action] {
        guard case .exchange(var exchange) = state else { preconditionFailure("body bytes in state \(state)") }
        exchange.bytesIn += Int64(count)
        exchange.rateBytes += Int64(count)
        exchange.lastProgress = now
        switch exchange.input {
        case .streaming:
            if exchange.bytesIn > exchange.bodyLimit {
                exchange.input = .abandoned
                exchange.keepAlive = false
                state = .exchange(exchange)
                return [.failBody(.payloadTooLarge("the body exceeds \(exchange.bodyLimit) bytes"))]
            }
            state = .exchange(exchange)
            return [.deliverBody]
        case .discarding(let dropped):
            let total = dropped + Int64(count)
            if total > maxDiscardBytes {
                exchange.input = .abandoned
                exchange.keepAlive = false
                return [.dropBody] + endIfDone(&exchange, now: now)
            }
            exchange.input = .discarding(dropped: total)
            state = .exchange(exchange)
            return [.dropBody]
        default:
            preconditionFailure("body bytes decoded while the input is \(exchange.input)")
        }
    }

    /// The handler's stream stopped taking bytes (above its high watermark).
    mutating func bodyPaused() {
        guard case .exchange(var exchange) = state, exchange.input == .streaming else { return }
        exchange.input = .paused
        state = .exchange(exchange)
    }

    /// The handler asks for (more of) the body: the first time, or its stream has room again.
    mutating func bodyDemanded(now: UInt64) -> [Action] {
        guard case .exchange(var exchange) = state else { return [] }
        switch exchange.input {
        case .awaitingDemand where exchange.output == .awaitingResponse:
            exchange.input = .streaming
            exchange.restartClocks(now)
            state = .exchange(exchange)
            return exchange.expectsContinue ? [.sendContinue] : []
        case .paused:
            exchange.input = .streaming
            exchange.restartClocks(now) // the client was held back by us, not late
            state = .exchange(exchange)
            return []
        default:
            return []
        }
    }

    /// The request's last byte is read.
    mutating func bodyEnded(now: UInt64) -> [Action] {
        guard case .exchange(var exchange) = state else { preconditionFailure("end of body in state \(state)") }
        let wasStreaming = exchange.input == .streaming
        exchange.input = .complete
        let done = endIfDone(&exchange, now: now)
        return (wasStreaming ? [.finishBody] : []) + done
    }

    /// The input cannot be trusted (malformed head or body framing): answer and close.
    mutating func parseFailed(_ error: HTTPError) -> [Action] {
        switch state {
        case .idle, .readingHead:
            state = .closingAfterOutput(linger: true)
            return [.writeError(error)]
        case .exchange(var exchange):
            let wasStreaming = exchange.input == .streaming || exchange.input == .paused
            exchange.input = .abandoned
            exchange.keepAlive = false
            let done = endIfDone(&exchange, now: exchange.lastProgress)
            return (wasStreaming ? [.failBody(error)] : []) + done
        default:
            return []
        }
    }

    /// The client closed its side (read returned 0).
    mutating func peerClosed() -> [Action] {
        switch state {
        case .idle, .readingHead, .lingering:
            state = .closed
            return [.close]
        case .exchange(var exchange):
            switch exchange.input {
            case .awaitingDemand, .streaming, .paused:
                // The body will never be whole: its handler hears so, and nobody is left to answer.
                state = .closed
                return [.failBody(.clientClosed), .close]
            case .discarding:
                state = .closed
                return [.close]
            case .complete, .abandoned:
                // A half-closed client may still read the answer: send it, then close.
                exchange.input = .abandoned
                exchange.keepAlive = false
                state = .exchange(exchange)
                return []
            }
        case .closingAfterOutput:
            state = .closingAfterOutput(linger: false)
            return []
        case .closed:
            return []
        }
    }

    // MARK: Output side

    /// The handler's answer arrived. `closes`: its body ends with the connection (a body of
    /// unknown length to an HTTP/1.0 client).
    mutating func responseReady(now: UInt64, maxDiscardBytes: Int64, closes: Bool = false) -> [Action] {
        guard case .exchange(var exchange) = state, exchange.output == .awaitingResponse else { return [] }
        exchange.output = .sending
        switch exchange.input {
        case .awaitingDemand where exchange.expectsContinue:
            // The client waits for a 100 Continue that will not come: answer and close.
            exchange.input = .abandoned
        case .awaitingDemand, .streaming, .paused:
            // The rest of the body is nobody's: drop it when small, else close after answering.
            let remaining = exchange.contentLength.map { $0 - exchange.bytesIn }
            if let remaining, remaining > maxDiscardBytes {
                exchange.input = .abandoned
            } else {
                exchange.input = .discarding(dropped: 0)
                exchange.restartClocks(now)
            }
        case .discarding, .complete, .abandoned:
            break
        }
        if exchange.input == .abandoned || closes { exchange.keepAlive = false }
        let keepAlive = exchange.keepAlive && !isShuttingDown
        exchange.keepAlive = keepAlive
        state = .exchange(exchange)
        return [.writeResponse(keepAlive: keepAlive)]
    }

    /// The whole answer is queued (its streamed body too).
    mutating func responseSent(now: UInt64) -> [Action] {
        guard case .exchange(var exchange) = state, exchange.output == .sending else { return [] }
        exchange.output = .sent
        return endIfDone(&exchange, now: now)
    }

    /// The writer could not write everything: the client reads nothing for now.
    mutating func outputBlocked(now: UInt64) {
        if outputBlockedSince == nil { outputBlockedSince = now }
    }

    /// The writer wrote all it held. `inputPending`: bytes of a request may still come (the
    /// buffer holds some, or a request is half read), so closing lingers.
    mutating func outputFlushed(inputPending: Bool, now: UInt64) -> [Action] {
        outputBlockedSince = nil
        guard case .closingAfterOutput(let linger) = state else { return [] }
        if linger && inputPending {
            state = .lingering(since: now)
            return [.linger]
        }
        state = .closed
        return [.close]
    }

    /// Ends the exchange once the request is read and the answer queued whole.
    private mutating func endIfDone(_ exchange: inout Exchange, now: UInt64) -> [Action] {
        guard exchange.output == .sent else {
            state = .exchange(exchange)
            return []
        }
        switch exchange.input {
        case .complete where exchange.keepAlive && !isShuttingDown:
            state = .idle(since: now)
            return [.exchangeDone]
        case .complete:
            state = .closingAfterOutput(linger: false)
            return [.exchangeDone]
        case .abandoned:
            state = .closingAfterOutput(linger: true)
            return [.exchangeDone]
        default:
            state = .exchange(exchange)
            return []
        }
    }

    // MARK: Time and shutdown

    /// The deadline passed (the shell checks `deadline` first; this checks again).
    mutating func deadlineReached(now: UInt64, _ timeouts: Timeouts) -> [Action] {
        guard let due = deadline(timeouts), due <= now else { return [] }
        if outputBlockedSince != nil {
            state = .closed
            return [.close]
        }
        switch state {
        case .idle, .lingering:
            state = .closed
            return [.close]
        case .readingHead:
            state = .closingAfterOutput(linger: true)
            return [.writeError(.requestTimeout("the request head did not arrive in time"))]
        case .exchange(var exchange):
            let streaming = exchange.input == .streaming
            exchange.input = .abandoned
            exchange.keepAlive = false
            if streaming {
                // Its handler answers the 408 when it next reads.
                state = .exchange(exchange)
                return [.failBody(.requestTimeout("the request body stalled"))]
            }
            // Discarding after the answer: nothing more to say to a client that stopped sending.
            state = .closed
            return [.close]
        case .closingAfterOutput, .closed:
            return []
        }
    }

    /// The server is stopping: close when idle, else after the answer in progress.
    mutating func shutdown() -> [Action] {
        isShuttingDown = true
        switch state {
        case .idle, .lingering:
            state = .closed
            return [.close]
        case .exchange(var exchange):
            if exchange.output == .awaitingResponse { exchange.keepAlive = false }
            state = .exchange(exchange)
            return []
        case .readingHead, .closingAfterOutput, .closed:
            return []
        }
    }

    /// The socket failed, or the shell closed it.
    mutating func closed() {
        state = .closed
    }
}

/// What the state machine needs to know of a head.
struct HeadSummary: Equatable, Sendable {
    var hasBody: Bool
    var contentLength: Int64?
    var expectsContinue: Bool
    var keepAlive: Bool
    var bodyLimit: Int64

    init(hasBody: Bool, contentLength: Int64?, expectsContinue: Bool, keepAlive: Bool, bodyLimit: Int64) {
        self.hasBody = hasBody
        self.contentLength = contentLength
        self.expectsContinue = expectsContinue
        self.keepAlive = keepAlive
        self.bodyLimit = bodyLimit
    }

    init(_ head: RequestHead, bodyLimit: Int64) {
        self.init(hasBody: head.framing.hasBody, contentLength: head.contentLength, expectsContinue: head.expectsContinue,
                  keepAlive: head.keepAlive, bodyLimit: bodyLimit)
    }
}
