import Testing
@testable import NTHTTPCore

/// The connection's rules, without sockets: each test feeds the machine what a connection
/// would see and checks what it is told to do.
@Suite struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine

    static let timeouts = Machine.Timeouts(header: 100, idle: 1_000, body: 200, send: 300, linger: 50)
    static let maxDiscard: Int64 = 64

    static func head(body: Int64? = nil, chunked: Bool = false, expectsContinue: Bool = false, keepAlive: Bool = true,
                     limit: Int64 = 1_000) -> HeadSummary {
        HeadSummary(hasBody: chunked || (body ?? 0) > 0, contentLength: chunked ? nil : body, expectsContinue: expectsContinue,
                    keepAlive: keepAlive, bodyLimit: limit)
    }

    /// A machine that has received `head` at time 0.
    static func serving(_ head: HeadSummary, refused: Bool = false) -> Machine {
        var machine = Machine(now: 0)
        machine.headBegan(now: 0)
        #expect(machine.headReceived(head, refused: refused, now: 0) == [.startRequest])
        return machine
    }

    // MARK: Pipelining

    @Test func oneRequestAtATimeTheNextHeadWaitsForTheAnswer() {
        var machine = Self.serving(Self.head())
        // A bodiless request is read to its end at once; the next head is not decoded until
        // the answer is out, so answers keep their order.
        #expect(machine.decoding == .body)
        #expect(machine.bodyEnded(now: 1) == [.finishBody]) // an empty body ends at once
        #expect(machine.decoding == .nothing)
        #expect(!machine.wantsInput)
        #expect(machine.responseReady(now: 2, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: true)])
        #expect(machine.decoding == .nothing)
        #expect(machine.responseSent(now: 3) == [.exchangeDone])
        #expect(machine.state == .idle(since: 3))
        #expect(machine.decoding == .head)
        // The next pipelined request.
        machine.headBegan(now: 3)
        #expect(machine.headReceived(Self.head(), refused: false, now: 4) == [.startRequest])
    }

    /// Interim (1xx) answers go out while a request is served and its final answer is not
    /// queued: never between requests, never after the final answer.
    @Test func interimAnswersAreAcceptedOnlyBeforeTheFinalAnswer() {
        var machine = Machine(now: 0)
        #expect(!machine.acceptsInterim)
        machine = Self.serving(Self.head(body: 10))
        #expect(machine.acceptsInterim)
        #expect(machine.bodyReceived(10, now: 1, maxDiscardBytes: Self.maxDiscard) == [.deliverBody])
        #expect(machine.acceptsInterim)
        _ = machine.bodyEnded(now: 2)
        #expect(machine.acceptsInterim)
        #expect(machine.responseReady(now: 3, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: true)])
        #expect(!machine.acceptsInterim)
        #expect(machine.responseSent(now: 4) == [.exchangeDone])
        #expect(!machine.acceptsInterim)
    }

    @Test func anAnswerWithAStreamedBodyEndsTheExchangeOnlyWhenSent() {
        var machine = Self.serving(Self.head())
        _ = machine.bodyEnded(now: 1)
        _ = machine.responseReady(now: 2, maxDiscardBytes: Self.maxDiscard)
        #expect(machine.isServingRequest)
        #expect(machine.responseSent(now: 9) == [.exchangeDone])
        #expect(!machine.isServingRequest)
    }

    @Test func aRequestThatAsksToCloseClosesAfterItsAnswerIsWritten() {
        var machine = Self.serving(Self.head(keepAlive: false))
        _ = machine.bodyEnded(now: 1)
        #expect(machine.responseReady(now: 2, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: false)])
        #expect(machine.responseSent(now: 3) == [.exchangeDone])
        #expect(machine.state == .closingAfterOutput(linger: false))
        #expect(machine.outputFlushed(inputPending: true, now: 4) == [.close])
    }

    @Test func aBodyOfUnknownLengthToAnHTTP10ClientClosesTheConnection() {
        var machine = Self.serving(Self.head())
        _ = machine.bodyEnded(now: 1)
        #expect(machine.responseReady(now: 2, maxDiscardBytes: Self.maxDiscard, closes: true) == [.writeResponse(keepAlive: false)])
    }

    // MARK: Bodies, back-pressure and 100-continue

    @Test func bodyBytesGoToTheHandlerUntilItsStreamIsFull() {
        var machine = Self.serving(Self.head(body: 10))
        #expect(machine.isReceivingBody)
        #expect(machine.bodyReceived(4, now: 1, maxDiscardBytes: Self.maxDiscard) == [.deliverBody])
        machine.bodyPaused()
        #expect(!machine.wantsInput)
        #expect(machine.decoding == .nothing)
        #expect(machine.deadline(Self.timeouts) == nil) // held back by us: no body timeout
        #expect(machine.bodyDemanded(now: 5).isEmpty)
        #expect(machine.wantsInput)
        #expect(machine.deadline(Self.timeouts) == 5 + Self.timeouts.body) // the clock restarts
        #expect(machine.bodyReceived(6, now: 6, maxDiscardBytes: Self.maxDiscard) == [.deliverBody])
        #expect(machine.bodyEnded(now: 7) == [.finishBody])
        #expect(!machine.isReceivingBody)
    }

    @Test func aBodyPastTheRouteLimitFailsWith413AndTheConnectionCloses() {
        var machine = Self.serving(Self.head(chunked: true, limit: 8))
        #expect(machine.bodyReceived(8, now: 1, maxDiscardBytes: Self.maxDiscard) == [.deliverBody])
        let actions = machine.bodyReceived(1, now: 2, maxDiscardBytes: Self.maxDiscard)
        #expect(actions.count == 1)
        guard case .failBody(let error) = actions.first else { Issue.record("no failBody: \(actions)"); return }
        #expect(error.status.code == 413)
        #expect(!machine.wantsInput)
        #expect(machine.responseReady(now: 3, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: false)])
        #expect(machine.responseSent(now: 4) == [.exchangeDone])
        #expect(machine.outputFlushed(inputPending: true, now: 5) == [.linger])
    }

    @Test func continueIsSentOnlyWhenTheHandlerAsksForTheBody() {
        var machine = Self.serving(Self.head(body: 10, expectsContinue: true))
        #expect(!machine.wantsInput) // the client waits; so do we
        #expect(machine.bodyDemanded(now: 1) == [.sendContinue])
        #expect(machine.wantsInput)
        #expect(machine.bodyDemanded(now: 2).isEmpty) // once
    }

    @Test func anAnswerBeforeTheContinueClosesAfterItAndLingers() {
        var machine = Self.serving(Self.head(body: 10, expectsContinue: true))
        // 401 or 413 before a byte of the body: no 100 Continue, and the connection closes.
        #expect(machine.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: false)])
        #expect(machine.bodyDemanded(now: 2).isEmpty) // too late to ask
        #expect(machine.responseSent(now: 2) == [.exchangeDone])
        #expect(machine.state == .closingAfterOutput(linger: true))
        #expect(machine.outputFlushed(inputPending: false, now: 3) == [.close])
    }

    @Test func aRefusedRequestsBodyIsNotReadBeforeItsAnswer() {
        var machine = Self.serving(Self.head(body: 10), refused: true)
        #expect(!machine.wantsInput)
        #expect(machine.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: true)])
        #expect(machine.wantsInput) // now read and dropped: small enough to keep the connection
    }

    // MARK: Discard and linger

    @Test func aSmallUnreadBodyIsDroppedAndTheConnectionKept() {
        var machine = Self.serving(Self.head(body: 10))
        #expect(machine.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: true)])
        #expect(machine.responseSent(now: 1).isEmpty) // the body is still to be read
        #expect(machine.decoding == .body)
        #expect(machine.bodyReceived(10, now: 2, maxDiscardBytes: Self.maxDiscard) == [.dropBody])
        #expect(machine.bodyEnded(now: 3) == [.exchangeDone])
        #expect(machine.state == .idle(since: 3))
    }

    @Test func aLargeUnreadBodyClosesTheConnectionAfterTheAnswerWithALinger() {
        var machine = Self.serving(Self.head(body: 10_000))
        #expect(machine.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: false)])
        #expect(machine.responseSent(now: 2) == [.exchangeDone])
        #expect(machine.outputFlushed(inputPending: true, now: 3) == [.linger])
        #expect(machine.state == .lingering(since: 3))
        #expect(machine.wantsInput) // read and dropped, so the client sees the answer, not a reset
        #expect(machine.deadline(Self.timeouts) == 3 + Self.timeouts.linger)
        #expect(machine.peerClosed() == [.close])
    }

    @Test func aChunkedBodyIsDroppedOnlyUpToTheDiscardLimit() {
        var machine = Self.serving(Self.head(chunked: true))
        _ = machine.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard)
        _ = machine.responseSent(now: 1)
        #expect(machine.bodyReceived(60, now: 2, maxDiscardBytes: Self.maxDiscard) == [.dropBody])
        #expect(machine.bodyReceived(60, now: 3, maxDiscardBytes: Self.maxDiscard) == [.dropBody, .exchangeDone])
        #expect(machine.state == .closingAfterOutput(linger: true))
    }

    // MARK: Deadlines, in every state

    @Test func idleConnectionsCloseSilently() {
        var machine = Machine(now: 0)
        #expect(machine.deadline(Self.timeouts) == Self.timeouts.idle)
        #expect(machine.deadlineReached(now: Self.timeouts.idle - 1, Self.timeouts).isEmpty) // not yet
        #expect(machine.deadlineReached(now: Self.timeouts.idle, Self.timeouts) == [.close])
    }

    @Test func aLateHeadIsAnswered408() {
        var machine = Machine(now: 0)
        machine.headBegan(now: 10)
        #expect(machine.deadline(Self.timeouts) == 10 + Self.timeouts.header)
        let actions = machine.deadlineReached(now: 10 + Self.timeouts.header, Self.timeouts)
        guard case .writeError(let error) = actions.first else { Issue.record("no 408: \(actions)"); return }
        #expect(error.status.code == 408)
        #expect(machine.state == .closingAfterOutput(linger: true))
    }

    /// Security finding: a byte every 25 s is progress, so the body timeout (30 s) never fired.
    @Test func aBodyTrickledBelowTheMinimumRateFailsAfterTheGrace() {
        let second: UInt64 = 1_000_000_000
        var timeouts = Self.timeouts
        timeouts.body = 30 * second
        timeouts.minBodyBytesPerSecond = 1024
        var trickle = Self.serving(Self.head(body: 1_000_000, limit: 2_000_000))
        _ = trickle.bodyReceived(1, now: 25 * second, maxDiscardBytes: Self.maxDiscard)
        let due = trickle.deadline(timeouts)!
        #expect(due < 31 * second) // not 25 s + 30 s: the average is far below 1 KiB/s
        guard case .failBody(let error) = trickle.deadlineReached(now: due, timeouts).first else { Issue.record("no 408"); return }
        #expect(error.status.code == 408)

        // At twice the minimum, the stall timeout is the nearer one.
        var steady = Self.serving(Self.head(body: 1_000_000, limit: 2_000_000))
        for tick in 1...40 { _ = steady.bodyReceived(2048, now: UInt64(tick) * second, maxDiscardBytes: Self.maxDiscard) }
        #expect(steady.deadline(timeouts) == 40 * second + timeouts.body)

        // Time the server held the body back (its stream full) is not the client's.
        var held = Self.serving(Self.head(body: 1_000_000, limit: 2_000_000))
        _ = held.bodyReceived(2048, now: 1 * second, maxDiscardBytes: Self.maxDiscard)
        held.bodyPaused()
        _ = held.bodyDemanded(now: 100 * second)
        #expect(held.deadline(timeouts) == 100 * second + timeouts.body)

        // A body being discarded (answered early) is held to the same rate.
        var discarded = Self.serving(Self.head(body: 100, limit: 2_000_000))
        _ = discarded.responseReady(now: 1, maxDiscardBytes: 1_000)
        _ = discarded.bodyReceived(1, now: 25 * second, maxDiscardBytes: 1_000)
        #expect(discarded.deadline(timeouts)! < 31 * second)
    }

    @Test func aStalledBodyFailsWith408AndItsHandlerAnswers() {
        var machine = Self.serving(Self.head(body: 100))
        _ = machine.bodyReceived(10, now: 5, maxDiscardBytes: Self.maxDiscard)
        #expect(machine.deadline(Self.timeouts) == 5 + Self.timeouts.body)
        let actions = machine.deadlineReached(now: 5 + Self.timeouts.body, Self.timeouts)
        guard case .failBody(let error) = actions.first else { Issue.record("no failBody: \(actions)"); return }
        #expect(error.status.code == 408)
        #expect(machine.isServingRequest) // the handler's answer (the 408) still goes out
        #expect(machine.responseReady(now: 400, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: false)])
    }

    @Test func theHandlersTurnHasNoDeadline() {
        var awaitingDemand = Self.serving(Self.head(body: 10, expectsContinue: true))
        #expect(awaitingDemand.deadline(Self.timeouts) == nil)
        #expect(awaitingDemand.deadlineReached(now: .max, Self.timeouts).isEmpty)
        var complete = Self.serving(Self.head())
        _ = complete.bodyEnded(now: 1)
        #expect(complete.deadline(Self.timeouts) == nil)
    }

    @Test func aStalledDiscardCloses() {
        var machine = Self.serving(Self.head(body: 10))
        _ = machine.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard)
        _ = machine.responseSent(now: 1)
        #expect(machine.deadlineReached(now: 1 + Self.timeouts.body, Self.timeouts) == [.close])
    }

    @Test func aClientThatReadsNothingIsDisconnectedInAnyState() {
        for start in [Machine(now: 0), Self.serving(Self.head())] {
            var machine = start
            machine.outputBlocked(now: 7)
            machine.outputBlocked(now: 8) // the first time counts
            #expect(machine.deadline(Self.timeouts) == 7 + Self.timeouts.send)
            #expect(machine.deadlineReached(now: 7 + Self.timeouts.send, Self.timeouts) == [.close])
            #expect(machine.state == .closed)
        }
    }

    @Test func writingAgainClearsTheSendDeadline() {
        var machine = Machine(now: 0)
        machine.outputBlocked(now: 7)
        _ = machine.outputFlushed(inputPending: false, now: 8)
        #expect(machine.deadline(Self.timeouts) == Self.timeouts.idle)
    }

    @Test func aLingerEndsAtItsDeadline() {
        var machine = Self.serving(Self.head(body: 10_000))
        _ = machine.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard)
        _ = machine.responseSent(now: 1)
        _ = machine.outputFlushed(inputPending: true, now: 2)
        #expect(machine.deadlineReached(now: 2 + Self.timeouts.linger, Self.timeouts) == [.close])
    }

    // MARK: Shutdown, in every state

    @Test func shutdownClosesAnIdleConnectionAtOnce() {
        var machine = Machine(now: 0)
        #expect(machine.shutdown() == [.close])
        #expect(machine.state == .closed)
    }

    @Test func shutdownLetsAHeadInProgressFinishAndAnswersItWithClose() {
        var machine = Machine(now: 0)
        machine.headBegan(now: 1)
        #expect(machine.shutdown().isEmpty)
        _ = machine.headReceived(Self.head(), refused: false, now: 2)
        _ = machine.bodyEnded(now: 2)
        #expect(machine.responseReady(now: 3, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: false)])
        #expect(machine.responseSent(now: 4) == [.exchangeDone])
        #expect(machine.outputFlushed(inputPending: false, now: 5) == [.close])
    }

    @Test func shutdownLetsARequestInFlightFinishAndItsAnswerSaysClose() {
        var machine = Self.serving(Self.head(body: 10))
        #expect(machine.shutdown().isEmpty)
        #expect(machine.bodyReceived(10, now: 1, maxDiscardBytes: Self.maxDiscard) == [.deliverBody])
        #expect(machine.bodyEnded(now: 2) == [.finishBody])
        #expect(machine.responseReady(now: 3, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: false)])
        #expect(machine.responseSent(now: 4) == [.exchangeDone])
        #expect(machine.state == .closingAfterOutput(linger: false))
    }

    @Test func shutdownAfterAKeepAliveAnswerStillClosesOnceTheExchangeEnds() {
        var machine = Self.serving(Self.head(body: 10))
        _ = machine.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard) // keep-alive, discarding
        #expect(machine.shutdown().isEmpty)
        _ = machine.responseSent(now: 2)
        _ = machine.bodyReceived(10, now: 3, maxDiscardBytes: Self.maxDiscard)
        #expect(machine.bodyEnded(now: 4) == [.exchangeDone])
        #expect(machine.state == .closingAfterOutput(linger: false))
    }

    @Test func shutdownWhileClosingOrLingering() {
        var closing = Self.serving(Self.head(keepAlive: false))
        _ = closing.bodyEnded(now: 1)
        _ = closing.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard)
        _ = closing.responseSent(now: 1)
        #expect(closing.shutdown().isEmpty) // already on its way out
        var lingering = Self.serving(Self.head(body: 10_000))
        _ = lingering.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard)
        _ = lingering.responseSent(now: 1)
        _ = lingering.outputFlushed(inputPending: true, now: 1)
        #expect(lingering.shutdown() == [.close])
        var closed = Machine(now: 0)
        closed.closed()
        #expect(closed.shutdown().isEmpty)
    }

    // MARK: The peer going away, and malformed input

    @Test func aClientGoneMidBodyFailsTheBodyAndCloses() {
        var machine = Self.serving(Self.head(body: 100))
        _ = machine.bodyReceived(10, now: 1, maxDiscardBytes: Self.maxDiscard)
        #expect(machine.peerClosed() == [.failBody(.clientClosed), .close])
    }

    @Test func aHalfClosedClientStillGetsItsAnswer() {
        var machine = Self.serving(Self.head())
        _ = machine.bodyEnded(now: 1)
        #expect(machine.peerClosed().isEmpty)
        #expect(machine.responseReady(now: 2, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: false)])
        #expect(machine.responseSent(now: 3) == [.exchangeDone])
        #expect(machine.outputFlushed(inputPending: false, now: 4) == [.close])
    }

    @Test func aClientGoneBetweenRequestsIsClosed() {
        var idle = Machine(now: 0)
        #expect(idle.peerClosed() == [.close])
        var reading = Machine(now: 0)
        reading.headBegan(now: 1)
        #expect(reading.peerClosed() == [.close])
    }

    @Test func aMalformedHeadIsAnsweredAndTheConnectionCloses() {
        var machine = Machine(now: 0)
        machine.headBegan(now: 0)
        #expect(machine.parseFailed(.badRequest("bad")) == [.writeError(.badRequest("bad"))])
        #expect(!machine.wantsInput)
        #expect(machine.outputFlushed(inputPending: true, now: 1) == [.linger])
    }

    @Test func malformedBodyFramingFailsTheBody() {
        var machine = Self.serving(Self.head(chunked: true))
        #expect(machine.parseFailed(.badRequest("bad chunk")) == [.failBody(.badRequest("bad chunk"))])
        #expect(machine.responseReady(now: 1, maxDiscardBytes: Self.maxDiscard) == [.writeResponse(keepAlive: false)])
    }
}
