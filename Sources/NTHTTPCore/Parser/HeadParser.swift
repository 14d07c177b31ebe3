/// Parses a complete request head (request line and header section, up to and including the
/// empty line) that `RequestDecoder` found in the read buffer. RFC 9112 §2–§7 and RFC 9110 §5.
enum HeadParser {
    private static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), colon = UInt8(ascii: ":")

    /// Copies `head` into `storage` and parses it there.
    static func parse(_ head: UnsafeRawBufferPointer, into storage: RequestHeadStorage) throws(HTTPError) -> RequestHead {
        storage.bytes.removeAll(keepingCapacity: true)
        storage.bytes.append(contentsOf: head)
        storage.fields.removeAll(keepingCapacity: true)
        let result = storage.bytes.withUnsafeBytes { bytes in
            Result { () throws(HTTPError) -> RequestHead in try parse(bytes, storage) }
        }
        return try result.get()
    }

    private static func parse(_ bytes: UnsafeRawBufferPointer, _ storage: RequestHeadStorage) throws(HTTPError) -> RequestHead {
        var position = 0
        // §2.2: a server SHOULD ignore at least one empty line received before the request-line.
        while position < bytes.count, bytes[position] == cr || bytes[position] == lf { position += 1 }

        // request-line = method SP request-target SP HTTP-version (§3)
        guard let lineEnd = try findLineEnd(bytes, from: position) else { throw .badRequest("incomplete request line") }
        let line = position..<lineEnd.contentEnd
        guard let firstSpace = bytes[line].firstIndex(of: space) else { throw .badRequest("malformed request line") }
        let methodRange = line.lowerBound..<firstSpace
        guard !methodRange.isEmpty, methodRange.allSatisfy({ isTokenChar(bytes[$0]) }) else {
            throw .badRequest("malformed method")
        }
        let targetStart = firstSpace + 1
        guard let secondSpace = bytes[targetStart..<line.upperBound].firstIndex(of: space) else {
            throw .badRequest("malformed request line")
        }
        let targetRange = targetStart..<secondSpace
        let versionRange = (secondSpace + 1)..<line.upperBound
        let version = try parseVersion(UnsafeRawBufferPointer(rebasing: bytes[versionRange]))
        let method = HTTPMethod(bytes: UnsafeRawBufferPointer(rebasing: bytes[methodRange]))
        let (path, query) = try parseTarget(bytes, targetRange, method: method)

        // Header fields (§5): field-name ":" OWS field-value OWS
        var contentLength: Int64?
        var chunked = false
        var sawTransferEncoding = false
        var closeRequested = false
        var keepAliveRequested = false
        var expectsContinue = false
        var hostCount = 0
        var authorizationCount = 0
        position = lineEnd.next
        while true {
            guard let end = try findLineEnd(bytes, from: position) else { throw .badRequest("incomplete header section") }
            if end.contentEnd == position { break } // the empty line ends the head
            let first = bytes[position]
            if first == space || first == tab {
                throw .badRequest("obsolete line folding is not accepted") // §5.2
            }
            guard let colonIndex = bytes[position..<end.contentEnd].firstIndex(of: colon) else {
                throw .badRequest("header line without a colon")
            }
            let nameRange = position..<colonIndex
            guard !nameRange.isEmpty, nameRange.allSatisfy({ isTokenChar(bytes[$0]) }) else {
                // Includes whitespace between the name and the colon, which §5.1 forbids.
                throw .badRequest("malformed header name")
            }
            var valueStart = colonIndex + 1
            var valueEnd = end.contentEnd
            while valueStart < valueEnd, bytes[valueStart] == space || bytes[valueStart] == tab { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == space || bytes[valueEnd - 1] == tab { valueEnd -= 1 }
            for index in valueStart..<valueEnd where !isFieldValueChar(bytes[index]) {
                throw .badRequest("invalid character in header value")
            }
            storage.fields.append(.init(name: nameRange, value: valueStart..<valueEnd))
            let name = bytes[nameRange]
            let value = UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueEnd])
            if equalsIgnoringCase(name, "content-length") {
                let length = try parseContentLength(value)
                if let previous = contentLength, previous != length {
                    throw .badRequest("conflicting Content-Length values") // §6.3 ¶5
                }
                contentLength = length
            } else if equalsIgnoringCase(name, "transfer-encoding") {
                sawTransferEncoding = true
                chunked = try parseTransferEncoding(value, alreadyChunked: chunked)
            } else if equalsIgnoringCase(name, "connection") {
                forEachToken(value) { token in
                    if equalsIgnoringCase(token[...], "close") { closeRequested = true }
                    if equalsIgnoringCase(token[...], "keep-alive") { keepAliveRequested = true }
                }
            } else if equalsIgnoringCase(name, "expect") {
                guard equalsIgnoringCase(value[...], "100-continue") else {
                    throw HTTPError(.expectationFailed, code: "expectation_failed", "only 100-continue is supported")
                }
                expectsContinue = version == .http11
            } else if equalsIgnoringCase(name, "host") {
                hostCount += 1
                // §3.2: an invalid Host value is a 400 (uri-host [":" port], RFC 3986 §3.2.2).
                guard !value.isEmpty, value.allSatisfy(isHostChar) else { throw .badRequest("invalid Host header") }
            } else if equalsIgnoringCase(name, "authorization") {
                // A singleton field (RFC 9110 §11.6.2): which of two would be meant is not guessed.
                authorizationCount += 1
                if authorizationCount > 1 { throw .badRequest("more than one Authorization header") }
            }
            position = end.next
        }

        // §3.2: a request in HTTP/1.1 has exactly one Host.
        if version == .http11 && hostCount != 1 {
            throw .badRequest(hostCount == 0 ? "missing Host header" : "more than one Host header")
        }
        let framing: BodyFraming
        if sawTransferEncoding {
            // §6.1: both framings at once are a smuggling attempt; HTTP/1.0 has no chunked.
            if contentLength != nil { throw .badRequest("both Transfer-Encoding and Content-Length") }
            if version == .http10 { throw .badRequest("Transfer-Encoding in an HTTP/1.0 request") }
            guard chunked else { throw .badRequest("the final transfer coding must be chunked") }
            framing = .chunked
        } else if let contentLength {
            framing = .length(contentLength)
        } else {
            framing = .none
        }
        let keepAlive = version == .http11 ? !closeRequested : (keepAliveRequested && !closeRequested)
        return RequestHead(method: method, version: version, path: path, query: query, framing: framing,
                           keepAlive: keepAlive, expectsContinue: expectsContinue,
                           headers: HTTPHeaders(storage: storage), methodRange: methodRange)
    }

    /// Where the line starting at `start` ends: CRLF only. §2.2 allows accepting a bare LF, but
    /// a proxy in front that does not would see other lines than this server (smuggling), so
    /// a bare LF, like a CR not followed by LF, is a 400.
    private static func findLineEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) throws(HTTPError) -> (contentEnd: Int, next: Int)? {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == lf { throw .badRequest("bare LF in head: lines end with CRLF") }
            if byte == cr {
                guard index + 1 < bytes.count, bytes[index + 1] == lf else { throw .badRequest("bare CR in head") }
                return (index, index + 2)
            }
            index += 1
        }
        return nil
    }

    private static func parseVersion(_ bytes: UnsafeRawBufferPointer) throws(HTTPError) -> HTTPVersion {
        // HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive (§2.3)
        guard bytes.count == 8, bytes[0..<5].elementsEqual("HTTP/".utf8), bytes[5] >= UInt8(ascii: "0"),
              bytes[5] <= UInt8(ascii: "9"), bytes[6] == UInt8(ascii: "."), bytes[7] >= UInt8(ascii: "0"),
              bytes[7] <= UInt8(ascii: "9") else {
            throw .badRequest("malformed HTTP version")
        }
        switch (bytes[5], bytes[7]) {
        case (UInt8(ascii: "1"), UInt8(ascii: "1")): return .http11
        case (UInt8(ascii: "1"), UInt8(ascii: "0")): return .http10
        default: throw HTTPError(.httpVersionNotSupported, code: "version_not_supported", "only HTTP/1.0 and HTTP/1.1 are served")
        }
    }

    /// origin-form, absolute-form (its path is used) and asterisk-form for OPTIONS (§3.2).
    private static func parseTarget(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, method: HTTPMethod) throws(HTTPError) -> (String, String?) {
        guard !range.isEmpty else { throw .badRequest("empty request target") }
        for index in range where bytes[index] <= 0x20 || bytes[index] >= 0x7f {
            throw .badRequest("invalid character in request target")
        }
        var start = range.lowerBound
        if bytes[start] == UInt8(ascii: "*") {
            guard range.count == 1, method == .options else { throw .badRequest("malformed request target") }
            return ("*", nil)
        }
        if bytes[start] != UInt8(ascii: "/") {
            // absolute-form: scheme "://" authority path
            let target = bytes[range]
            guard let schemeEnd = findSubsequence(target, "://") else { throw .badRequest("malformed request target") }
            // RFC 3986 §3.2: the authority ends at the first "/", "?" or "#"; a query straight
            // after it belongs to the path "/", never a path found inside the query.
            let authorityStart = schemeEnd + 3
            let authorityEnd = bytes[authorityStart..<range.upperBound].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            } ?? range.upperBound
            guard authorityEnd > authorityStart else { throw .badRequest("absolute-form target without a host") }
            if authorityEnd == range.upperBound { return ("/", nil) }
            if bytes[authorityEnd] == UInt8(ascii: "?") {
                return ("/", String(decoding: bytes[(authorityEnd + 1)..<range.upperBound], as: UTF8.self))
            }
            start = authorityEnd
        }
        let queryMark = bytes[start..<range.upperBound].firstIndex(of: UInt8(ascii: "?"))
        let pathEnd = queryMark ?? range.upperBound
        let path = String(decoding: bytes[start..<pathEnd], as: UTF8.self)
        let query = queryMark.map { String(decoding: bytes[($0 + 1)..<range.upperBound], as: UTF8.self) }
        return (path, query)
    }

    /// Content-Length = 1*DIGIT, or a list of identical values (§6.3 ¶5).
    private static func parseContentLength(_ value: UnsafeRawBufferPointer) throws(HTTPError) -> Int64 {
        var result: Int64?
        var failure = false
        forEachToken(value) { token in
            guard !failure else { return }
            guard let length = parseDecimal(token), result == nil || result == length else {
                failure = true
                return
            }
            result = length
        }
        guard !failure, let result else { throw .badRequest("malformed Content-Length") }
        return result
    }

    private static func parseDecimal(_ token: UnsafeRawBufferPointer) -> Int64? {
        guard !token.isEmpty, token.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in token {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Returns whether chunked is the final coding so far. Only `chunked` itself is
    /// implemented; other codings are refused (§6.1: 501).
    private static func parseTransferEncoding(_ value: UnsafeRawBufferPointer, alreadyChunked: Bool) throws(HTTPError) -> Bool {
        var chunked = alreadyChunked
        var unsupported = false
        var count = 0
        forEachToken(value) { token in
            count += 1
            if equalsIgnoringCase(token[...], "chunked") {
                if chunked { unsupported = true } // chunked applied twice
                chunked = true
            } else {
                unsupported = true
            }
        }
        if count == 0 { throw .badRequest("empty Transfer-Encoding") }
        if unsupported {
            throw HTTPError(.notImplemented, code: "not_implemented", "only the chunked transfer coding is supported")
        }
        return chunked
    }

    /// Calls `body` for each comma-separated element, trimmed, skipping empty ones (RFC 9110 §5.6.1).
    private static func forEachToken(_ value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
            var lo = start, hi = end
            while lo < hi, value[lo] == space || value[lo] == tab { lo += 1 }
            while hi > lo, value[hi - 1] == space || value[hi - 1] == tab { hi -= 1 }
            if lo < hi { body(UnsafeRawBufferPointer(rebasing: value[lo..<hi])) }
            start = end + 1
        }
    }

    private static func equalsIgnoringCase(_ bytes: Slice<UnsafeRawBufferPointer>, _ lowercase: StaticString) -> Bool {
        lowercase.withUTF8Buffer { name in
            guard bytes.count == name.count else { return false }
            return zip(bytes, name).allSatisfy { asciiLower($0) == $1 }
        }
    }

    private static func findSubsequence(_ bytes: Slice<UnsafeRawBufferPointer>, _ needle: StaticString) -> Int? {
        needle.withUTF8Buffer { needle -> Int? in
            guard bytes.count >= needle.count else { return nil }
            var index = bytes.startIndex
            while index + needle.count <= bytes.endIndex {
                if bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
                index += 1
            }
            return nil
        }
    }

    /// A byte of uri-host [":" port] (RFC 3986 §3.2.2): unreserved, pct-encoded, sub-delims
    /// but the comma (no list), and the brackets and colons of an IP literal and a port.
    private static func isHostChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return Array("-._~%!$&'()*+;=:[]".utf8).contains(byte)
        }
    }

    /// tchar (RFC 9110 §5.6.2).
    static func isTokenChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// field-vchar, SP or HTAB (RFC 9110 §5.5): no other control characters.
    private static func isFieldValueChar(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7f)
    }
}
