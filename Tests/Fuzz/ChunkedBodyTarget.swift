import NTHTTPCore

// libFuzzer target: the chunked body decoder, behind a fixed head. Differential: the input
// decoded in one piece and byte by byte must give the same body bytes and the same outcome
// (the decoder's promise: any split of the input gives the same events).
public func fuzzChunkedBody(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let head = Array("POST /v1/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
    let input = head + Array(UnsafeBufferPointer(start: data, count: count))
    let whole = decode(input, pieceSize: input.count)
    let bytewise = decode(input, pieceSize: 1)
    precondition(whole.body == bytewise.body && whole.outcome == bytewise.outcome,
                 "one piece gave \(whole.outcome) with \(whole.body.count) body bytes; byte by byte \(bytewise.outcome) with \(bytewise.body.count)")
    return 0
}

/// The body bytes decoded, and how decoding ended: "end", "error", or "more" (needs input).
/// Bytes not consumed are kept and given again with the next piece, as the connection does.
private func decode(_ input: [UInt8], pieceSize: Int) -> (body: [UInt8], outcome: String) {
    var decoder = RequestDecoder(maxHeadBytes: 8 << 10)
    var body: [UInt8] = []
    var pending: [UInt8] = []
    var start = 0
    while start < input.count {
        pending += input[start..<min(input.count, start + pieceSize)]
        start += pieceSize
        for _ in 0...pending.count + 1 {
            guard let step = try? pending.withUnsafeBytes({ try decoder.next($0) }) else {
                return (body, "error")
            }
            if case .body(let range) = step.event { body += pending[range] }
            if case .end = step.event { return (body, "end") }
            pending.removeFirst(step.consumed)
            if case .needMore = step.event, step.consumed == 0 { break }
        }
    }
    return (body, "more")
}
