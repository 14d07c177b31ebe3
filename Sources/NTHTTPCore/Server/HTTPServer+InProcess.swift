import NTLogging
import Synchronization

extension HTTPServer {
    /// One HTTP/1.1 request message (its head and whole body, as a client sends them)
    /// answered in process, the way a connection answers it: decoded by the same decoder,
    /// routed with the same refusals (404, 405, 413 by its announced length), through the
    /// server's middleware and the route's, errors as their JSON answers. No socket, no event
    /// loop, and the server need not be started: for tests of what a service accepts and
    /// refuses (Hummingbird's `.router` test client is the model). A message the decoder
    /// refuses is answered as a connection would answer it (400, 431, 413).
    public func respond(toMessage message: [UInt8]) async -> Response {
        var decoder = RequestDecoder(maxHeadBytes: configuration.maxHeadBytes)
        var offset = 0
        let head: RequestHead
        var body: [UInt8] = []
        let routing: ServerContext.Routing
        do {
            guard case .head(let decoded) = try Self.decode(message, &offset, &decoder, into: &body) else {
                throw HTTPError.badRequest("the message ends before its head does")
            }
            head = decoded
            // Routed at its head, as a connection routes it: a refusal is answered before the body.
            routing = context.routing(head, rejection: nil)
            if routing.refusal == nil {
                while case .body = try Self.decode(message, &offset, &decoder, into: &body) {}
            }
        } catch let error as HTTPError {
            return .error(error)
        } catch {
            return .error(.badRequest("\(error)"))
        }
        let demand = Demand()
        let stream = head.framing.hasBody && routing.refusal == nil ? feed(body, demand) : nil
        var request = Request(head: head, id: RequestID.next(), body: RequestBody(stream: stream),
                              route: routing.route, parameterValues: routing.parameters, receivedAt: monotonicNanoseconds())
        request.attributes[Refusal.self] = routing.refusal
        let context = self.context
        let answer = await Task(executorPreference: context.handlers) { await context.respond(to: request) }.value
        demand.end() // a body the handler left unread is not fed on
        return answer
    }

    /// The next head, body piece (appended to `body`) or end of `message` from `offset`; a
    /// message that stops before its request does is a 400.
    private static func decode(_ message: [UInt8], _ offset: inout Int, _ decoder: inout RequestDecoder,
                               into body: inout [UInt8]) throws -> RequestDecoder.Event {
        while true {
            let start = offset
            let (event, consumed) = try message.withUnsafeBytes { bytes in
                let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
                let step = try decoder.next(rest)
                if case .body(let range) = step.event { body.append(contentsOf: rest[range]) }
                return step
            }
            offset += consumed
            switch event {
            case .needMore where consumed > 0: continue
            case .needMore: throw HTTPError.badRequest("the message ends before the request does")
            default: return event
            }
        }
    }

    /// A body stream the handler reads `bytes` from, fed as a connection feeds it: a buffer at
    /// a time, waiting whenever the stream says it holds enough (the memory budget holds).
    private func feed(_ bytes: [UInt8], _ demand: Demand) -> BodyStream {
        let stream = BodyStream(budget: context.bodyBudget, buffers: context.bodyBuffers) { demand.asked() }
        let piece = max(1, context.configuration.bodyBufferBytes)
        let highWatermark = context.configuration.bodyHighWatermark(bodiesInProgress: 1)
        Task(executorPreference: context.handlers) {
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + piece)
                let more = bytes[offset..<end].withUnsafeBytes { stream.append($0, highWatermark: highWatermark) }
                offset = end
                if !more, await !demand.nextAsk() { return }
            }
            stream.finish()
        }
        return stream
    }
}

/// What the body's feeder awaits: the stream asking for more (an ask that came first is kept
/// for the next `nextAsk`), or the exchange's end.
private final class Demand: Sendable {
    private struct State {
        var asked = false
        var ended = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let state = Mutex(State())

    func asked() { answer { $0.asked = true } }

    func end() { answer { $0.ended = true } }

    /// True when the stream asked for more; false once the exchange ended.
    func nextAsk() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let now = state.withLock { state -> Bool? in
                if state.ended { return false }
                if state.asked {
                    state.asked = false
                    return true
                }
                state.waiter = continuation
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    private func answer(_ change: (inout State) -> Void) {
        let (waiter, value) = state.withLock { state -> (CheckedContinuation<Bool, Never>?, Bool) in
            change(&state)
            guard let waiter = state.waiter else { return (nil, false) }
            state.waiter = nil
            let value = !state.ended
            state.asked = false
            return (waiter, value)
        }
        waiter?.resume(returning: value)
    }
}
