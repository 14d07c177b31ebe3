/// Turns the bytes of a connection into request events, incrementally: a head, then the
/// body in pieces as they arrive (Content-Length or chunked, RFC 9112 §6 and §7.1), then the
/// end. Any split of the input gives the same events. Bytes are never copied except the head,
/// which goes into reusable storage.
public struct RequestDecoder {
    public enum Event {
        /// A complete head. Body events follow unless the framing has no body.
        case head(RequestHead)
        /// Body bytes: this range of the input given to `next`.
        case body(Range<Int>)
        /// The request (head and body) is complete; the next bytes start another request.
        case end
        /// Nothing more can be decoded from this input.
        case needMore
    }

    private enum State {
        case head(HeadScan)
        case lengthBody(remaining: Int64)
        case chunkSize(ChunkSizeLine)
        case chunkData(remaining: Int64)
        case chunkDataEnd(sawCR: Bool)
        case trailers(TrailerSection)
        case endOfMessage
    }

    /// How far the search for the end of a head has come, so feeding a head byte by byte
    /// stays linear.
    private struct HeadScan {
        var scanned = 0
        var lineStart = true
        /// Empty lines before the request line are skipped by the parser, not an end of head.
        var sawContent = false
    }

    /// A chunk-size line: 1*HEXDIG [ chunk-ext ] CRLF, where chunk-ext is
    /// *( BWS ";" BWS ext ): after the digits only whitespace and then ";" may come.
    private struct ChunkSizeLine {
        var size: Int64 = 0
        var digits = 0
        /// Whitespace after the digits: only more of it or ";" may follow.
        var afterSize = false
        var inExtension = false
        var length = 0
        var sawCR = false
    }

    /// The trailer section after the last chunk, ended by an empty line.
    private struct TrailerSection {
        var lineLength = 0
        var total = 0
        var sawCR = false
    }

    public let maxHeadBytes: Int
    private var state: State = .head(HeadScan())
    private var storage = RequestHeadStorage()

    /// - Parameter maxHeadBytes: the most a request line and header section may take (431).
    public init(maxHeadBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
    }

    /// Whether the decoder is between requests: the last one read whole, no byte of a next
    /// one seen yet.
    public var isAtRequestBoundary: Bool {
        switch state {
        case .head(let scan): return scan.scanned == 0
        case .endOfMessage, .lengthBody(remaining: 0): return true
        default: return false
        }
    }

    /// How many body bytes may come next with no framing among them (the rest of a
    /// Content-Length body, or of a chunk): a connection may read those straight into the
    /// body's buffers and report them with `consumeBody`. Nil otherwise.
    public var plainBodyBytesAhead: Int64? {
        switch state {
        case .lengthBody(let remaining) where remaining > 0: return remaining
        case .chunkData(let remaining): return remaining
        default: return nil
        }
    }

    /// Counts `count` body bytes the caller read past the decoder (at most
    /// `plainBodyBytesAhead`).
    public mutating func consumeBody(_ count: Int) {
        switch state {
        case .lengthBody(let remaining):
            precondition(Int64(count) <= remaining, "more body bytes than announced")
            state = .lengthBody(remaining: remaining - Int64(count))
        case .chunkData(let remaining):
            precondition(Int64(count) <= remaining, "more chunk bytes than announced")
            state = remaining == Int64(count) ? .chunkDataEnd(sawCR: false) : .chunkData(remaining: remaining - Int64(count))
        default:
            preconditionFailure("body bytes consumed in state \(state)")
        }
    }

    /// Decodes the next event from `input`, the bytes not yet consumed. The caller drops the
    /// first `consumed` bytes before the next call (body bytes included, once handled).
    /// `.needMore` with `consumed > 0` means framing bytes were used up: call again with the
    /// rest; with `consumed == 0` it means wait for more input.
    public mutating func next(_ input: UnsafeRawBufferPointer) throws(HTTPError) -> (event: Event, consumed: Int) {
        switch state {
        case .head(let scan):
            return try decodeHead(input, scan)
        case .lengthBody(let remaining):
            if remaining == 0 {
                state = .head(HeadScan())
                return (.end, 0)
            }
            guard !input.isEmpty else { return (.needMore, 0) }
            let take = Int(min(Int64(input.count), remaining))
            state = .lengthBody(remaining: remaining - Int64(take))
            return (.body(0..<take), take)
        case .chunkData(let remaining):
            guard !input.isEmpty else { return (.needMore, 0) }
            let take = Int(min(Int64(input.count), remaining))
            state = remaining - Int64(take) == 0 ? .chunkDataEnd(sawCR: false) : .chunkData(remaining: remaining - Int64(take))
            return (.body(0..<take), take)
        case .endOfMessage:
            state = .head(HeadScan())
            return (.end, 0)
        case .chunkSize, .chunkDataEnd, .trailers:
            return try decodeChunkFraming(input)
        }
    }

    /// Hands out the head storage for a new head: the same one when nobody else holds it.
    private mutating func reusableStorage() -> RequestHeadStorage {
        if !isKnownUniquelyReferenced(&storage) { storage = RequestHeadStorage() }
        return storage
    }

    private mutating func decodeHead(_ input: UnsafeRawBufferPointer, _ resumed: HeadScan) throws(HTTPError) -> (event: Event, consumed: Int) {
        var scan = resumed
        let limit = min(input.count, maxHeadBytes)
        var headEnd: Int?
        while scan.scanned < limit {
            let byte = input[scan.scanned]
            scan.scanned += 1
            if byte == UInt8(ascii: "\n") {
                if scan.lineStart && scan.sawContent { headEnd = scan.scanned; break }
                scan.lineStart = true
            } else if byte != UInt8(ascii: "\r") {
                scan.lineStart = false
                scan.sawContent = true
            }
        }
        guard let headEnd else {
            if input.count >= maxHeadBytes { throw .headerTooLarge("request line and headers exceed \(maxHeadBytes) bytes") }
            state = .head(scan)
            return (.needMore, 0)
        }
        let head = try HeadParser.parse(UnsafeRawBufferPointer(rebasing: input[0..<headEnd]), into: reusableStorage())
        switch head.framing {
        case .none: state = .endOfMessage
        case .length(let length): state = .lengthBody(remaining: length)
        case .chunked: state = .chunkSize(ChunkSizeLine())
        }
        return (.head(head), headEnd)
    }

    /// The framing of a chunked body (RFC 9112 §7.1), byte by byte so any split works.
    private mutating func decodeChunkFraming(_ input: UnsafeRawBufferPointer) throws(HTTPError) -> (event: Event, consumed: Int) {
        var index = 0
        while index < input.count {
            let byte = input[index]
            index += 1
            switch state {
            case .chunkSize(var line):
                line.length += 1
                // A size line with extensions is bounded like a header line.
                if line.length > maxHeadBytes { throw .badRequest("chunk size line too long") }
                // Lenient framing is how requests are smuggled past a proxy that reads it
                // otherwise: CRLF only, and nothing but an extension after the size.
                if line.sawCR {
                    guard byte == UInt8(ascii: "\n") else { throw .badRequest("bare CR in chunk size line") }
                    guard !line.afterSize || line.inExtension else { throw .badRequest("whitespace after a chunk size without an extension") }
                    return try finishSizeLine(line, consumed: index)
                } else if byte == UInt8(ascii: "\r") {
                    line.sawCR = true
                } else if byte == UInt8(ascii: "\n") {
                    throw .badRequest("bare LF in chunk size line")
                } else if line.inExtension {
                    guard byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte != 0x7f) else {
                        throw .badRequest("invalid character in chunk extension")
                    }
                } else if byte == UInt8(ascii: ";") {
                    guard line.digits > 0 else { throw .badRequest("malformed chunk size") }
                    line.inExtension = true
                } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                    guard line.digits > 0 else { throw .badRequest("malformed chunk size") }
                    line.afterSize = true
                } else if !line.afterSize, let digit = hexDigitValue(byte) {
                    // 15 hex digits is far beyond any limit and cannot overflow Int64.
                    guard line.digits < 15 else { throw .payloadTooLarge("chunk size too large") }
                    line.size = line.size << 4 | Int64(digit)
                    line.digits += 1
                } else {
                    throw .badRequest("malformed chunk size")
                }
                state = .chunkSize(line)
            case .chunkDataEnd(let sawCR):
                if byte == UInt8(ascii: "\n") && sawCR {
                    state = .chunkSize(ChunkSizeLine())
                } else if byte == UInt8(ascii: "\r") && !sawCR {
                    state = .chunkDataEnd(sawCR: true)
                } else {
                    throw .badRequest("chunk data not followed by CRLF")
                }
            case .trailers(var section):
                section.total += 1
                if section.total > maxHeadBytes { throw .headerTooLarge("trailer section too large") }
                if byte == UInt8(ascii: "\n") {
                    guard section.sawCR else { throw .badRequest("bare LF in trailer section") }
                    if section.lineLength == 0 {
                        state = .head(HeadScan())
                        return (.end, index)
                    }
                    section.lineLength = 0
                    section.sawCR = false
                } else if byte == UInt8(ascii: "\r") {
                    guard !section.sawCR else { throw .badRequest("bare CR in trailer section") }
                    section.sawCR = true
                } else {
                    guard !section.sawCR else { throw .badRequest("bare CR in trailer section") }
                    guard byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte != 0x7f) || byte >= 0x80 else {
                        throw .badRequest("invalid character in trailer section")
                    }
                    section.lineLength += 1
                }
                state = .trailers(section)
            default:
                preconditionFailure("chunk framing decoded in state \(state)")
            }
        }
        return (.needMore, index)
    }

    private mutating func finishSizeLine(_ line: ChunkSizeLine, consumed: Int) throws(HTTPError) -> (event: Event, consumed: Int) {
        guard line.digits > 0 else { throw .badRequest("malformed chunk size") }
        if line.size == 0 {
            state = .trailers(TrailerSection())
        } else {
            state = .chunkData(remaining: line.size)
        }
        return (.needMore, consumed)
    }

}

/// The value of a hex digit (either case), or nil: chunk sizes (RFC 9112 §7.1) and
/// percent-encoding (RFC 3986 §2.1).
func hexDigitValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
}
