/// The output side of a connection: response heads encoded into one buffer, fixed bodies
/// appended to it, files sent with sendfile(2) without passing through memory, chunked bodies
/// pulled as the socket drains. It writes what the socket takes and keeps the rest; it knows
/// nothing of requests.
struct ResponseWriter {
    enum FlushResult: Equatable {
        /// Everything is written.
        case empty
        /// The socket is full; call again when it is writable.
        case blocked
        /// The peer is gone, or a streamed body failed after its head went out: close.
        case failed
    }

    /// A response body still being sent after its head.
    private enum Streaming {
        case file(FileRegion, offset: Int64, remaining: Int64)
        case chunked(any ChunkedBodySource, terminate: Bool)
    }

    private var output: [UInt8] = []
    private var sent = 0
    private var streaming: Streaming?
    private var encoder = ResponseEncoder()
    /// Set when a streamed body finished during the last `flush`.
    private(set) var finishedStreamedBody = false

    init() {
        output.reserveCapacity(4096)
    }

    /// Bytes queued and not yet written.
    var backlog: Int { output.count - sent }

    /// Whether the last queued response still has a body to stream.
    var isStreamingBody: Bool { streaming != nil }

    var isEmpty: Bool { sent == output.count && streaming == nil }

    /// Queues `100 Continue` (RFC 9110 §15.2.1).
    mutating func writeContinue() {
        output.append(ascii: "HTTP/1.1 100 Continue\r\n\r\n")
    }

    /// Queues an informational (1xx) response ahead of the final one (RFC 9110 §15.2): its
    /// status line and fields, no body.
    mutating func writeInterim(_ status: HTTPStatus, headers: [HTTPField]) {
        ResponseEncoder.encodeInterim(status, headers: headers, into: &output)
    }

    /// Queues a response; returns the bytes of its body that will be sent.
    mutating func write(_ response: Response, requestID: RequestID, framing: ResponseEncoder.Framing, routeHeaders: [HTTPField]) -> Int64 {
        let sendsBody = encoder.encodeHead(response, requestID: requestID, framing: framing, routeHeaders: routeHeaders, into: &output)
        guard sendsBody else { return 0 }
        switch response.body {
        case .empty:
            return 0
        case .bytes(let bytes):
            output.append(contentsOf: bytes)
            return Int64(bytes.count)
        case .file(let region):
            streaming = .file(region, offset: region.offset, remaining: region.length)
            return region.length
        case .chunked(let source):
            streaming = .chunked(source, terminate: framing.version != .http10)
            return 0
        }
    }

    /// Writes queued output, then any streaming body, until done or the socket is full.
    mutating func flush(_ fd: Int32) -> FlushResult {
        finishedStreamedBody = false
        while true {
            if sent < output.count {
                let result = output.withUnsafeBytes { Socket.write(fd, UnsafeRawBufferPointer(rebasing: $0[sent...])) }
                switch result {
                case .bytes(let count):
                    sent += count
                    continue
                case .wouldBlock:
                    return .blocked
                case .endOfStream, .failed:
                    return .failed
                }
            }
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            sent = 0
            guard let body = streaming else { return .empty }
            switch body {
            case .file(let region, var offset, let remaining):
                switch Socket.sendFile(fd, file: region.fd, offset: &offset, count: Int(min(remaining, 1 << 20))) {
                case .bytes(let count):
                    let left = remaining - Int64(count)
                    streaming = left > 0 ? .file(region, offset: offset, remaining: left) : nil
                    if streaming == nil { finishedStreamedBody = true }
                case .wouldBlock:
                    return .blocked
                case .endOfStream, .failed:
                    return .failed // the file changed under us: the length already sent cannot be kept
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
                        // HTTP/1.0 has no chunked coding: the connection's close ends the body.
                        if terminate { output.append(ascii: "0\r\n\r\n") }
                        streaming = nil
                        finishedStreamedBody = true
                    }
                } catch {
                    return .failed // the head is sent: the only honest signal left is an unfinished body
                }
            }
        }
    }
}
