import NTHTTPCore

// libFuzzer target: the HTTP/1.1 request decoder (head, Content-Length and chunked framing,
// trailers, pipelining), fed the input in two pieces split where the first byte says, as a
// network delivers it; unconsumed bytes are kept and given again with the next piece, as the
// connection does. Errors are answers; a crash, a hang or a range outside the input is a bug.
public func fuzzRequestDecoder(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: count))
    var decoder = RequestDecoder(maxHeadBytes: 8 << 10)
    let split = count > 0 ? Int(input[0]) % (count + 1) : 0
    var pending: [UInt8] = []
    for piece in [input[0..<split], input[split...]] {
        pending += piece
        // Every step consumes bytes or asks for more: never more steps than bytes, plus one.
        for _ in 0...pending.count + 1 {
            guard let step = try? pending.withUnsafeBytes({ try decoder.next($0) }) else {
                return 0 // an error is an answer
            }
            precondition((0...pending.count).contains(step.consumed), "consumed outside the input")
            if case .body(let range) = step.event {
                precondition(range.lowerBound >= 0 && range.upperBound <= step.consumed, "a body range outside what was consumed")
            }
            pending.removeFirst(step.consumed)
            if case .needMore = step.event, step.consumed == 0 { break }
        }
    }
    return 0
}
