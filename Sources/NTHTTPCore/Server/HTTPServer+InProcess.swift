import NTLogging

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
        let stream = head.framing.hasBody && routing.refusal == nil ? whole(body) : nil
        var request = Request(head: head, id: RequestID.next(), body: RequestBody(stream: stream),
                              route: routing.route, parameterValues: routing.parameters, receivedAt: monotonicNanoseconds())
        request.attributes[Refusal.self] = routing.refusal
        let context = self.context
        return await Task(executorPreference: context.handlers) { await context.respond(to: request) }.value
    }

    /// A body stream holding all of `bytes`, ended: the message is in memory already, so
    /// nothing waits for the handler to read (the stream hands it out in buffers as it would a
    /// connection's).
    private func whole(_ bytes: [UInt8]) -> BodyStream {
        let stream = BodyStream(budget: context.bodyBudget, buffers: context.bodyBuffers) {}
        _ = bytes.withUnsafeBytes { stream.append($0, highWatermark: .max) }
        stream.finish()
        return stream
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
}
