import Testing
@testable import NTHTTPCore

/// What a decoder made of some input: the requests it saw, or the error that stopped it.
private struct Decoded: Equatable {
    struct Message: Equatable {
        var method: HTTPMethod
        var path: String
        var query: String?
        var version: HTTPVersion
        var keepAlive: Bool
        var expectsContinue: Bool
        var headers: [String]
        var body: [UInt8]
        var complete: Bool
    }

    var messages: [Message] = []
    var error: HTTPError?
}

/// Feeds `input` to a decoder in the pieces given by `splits`, keeping unconsumed bytes as a
/// connection does.
private func decode(_ input: [UInt8], splits: [Int], maxHeadBytes: Int = 8192) -> Decoded {
    var decoder = RequestDecoder(maxHeadBytes: maxHeadBytes)
    var result = Decoded()
    var buffer: [UInt8] = []
    var fed = 0
    var pieces = splits[...]
    while fed < input.count {
        let size = min(pieces.popFirst() ?? input.count, input.count - fed)
        buffer.append(contentsOf: input[fed..<(fed + size)])
        fed += size
        while true {
            let step: (event: RequestDecoder.Event, consumed: Int)
            do {
                step = try buffer.withUnsafeBytes { try decoder.next($0) }
            } catch {
                result.error = error as? HTTPError
                return result
            }
            switch step.event {
            case .head(let head):
                result.messages.append(.init(method: head.method, path: head.path, query: head.query, version: head.version,
                                             keepAlive: head.keepAlive, expectsContinue: head.expectsContinue,
                                             headers: head.headers.map { "\($0.name.lowercased())=\($0.value)" }, body: [], complete: false))
            case .body(let range):
                result.messages[result.messages.count - 1].body.append(contentsOf: buffer[range])
            case .end:
                result.messages[result.messages.count - 1].complete = true
            case .needMore:
                break
            }
            buffer.removeFirst(step.consumed)
            if case .needMore = step.event, step.consumed == 0 { break }
        }
    }
    return result
}

/// Decodes whole, byte by byte and in 20 random splits, and checks all agree.
private func decodeEveryWay(_ text: String, maxHeadBytes: Int = 8192) -> Decoded {
    let input = Array(text.utf8)
    let whole = decode(input, splits: [input.count], maxHeadBytes: maxHeadBytes)
    let bytewise = decode(input, splits: Array(repeating: 1, count: input.count), maxHeadBytes: maxHeadBytes)
    #expect(bytewise == whole, "byte by byte differs from whole")
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<20 {
        var splits: [Int] = []
        var total = 0
        while total < input.count {
            let size = Int.random(in: 1...max(1, input.count / 3), using: &generator)
            splits.append(size)
            total += size
        }
        #expect(decode(input, splits: splits, maxHeadBytes: maxHeadBytes) == whole, "split \(splits) differs from whole")
    }
    return whole
}

@Suite struct RequestDecoderTests {
    @Test func simpleGet() {
        let decoded = decodeEveryWay("GET /healthz?a=1 HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n")
        #expect(decoded.error == nil)
        #expect(decoded.messages.count == 1)
        let message = decoded.messages[0]
        #expect(message.method == .get)
        #expect(message.path == "/healthz")
        #expect(message.query == "a=1")
        #expect(message.version == .http11)
        #expect(message.keepAlive)
        #expect(message.complete)
        #expect(message.headers == ["host=x", "accept=*/*"])
    }

    @Test func contentLengthBody() {
        let decoded = decodeEveryWay("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world")
        #expect(decoded.messages.count == 1)
        #expect(decoded.messages[0].body == Array("hello world".utf8))
        #expect(decoded.messages[0].complete)
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() {
        let text = "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nChecksum: abc\r\nOther: 1\r\n\r\n"
        let decoded = decodeEveryWay(text)
        #expect(decoded.error == nil)
        #expect(decoded.messages.count == 1)
        #expect(decoded.messages[0].body == Array("hello 0123456789".utf8))
        #expect(decoded.messages[0].complete)
    }

    @Test func pipelinedRequestsComeInOrder() {
        let text = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
            + "PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            + "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
            + "GET /d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        let decoded = decodeEveryWay(text)
        #expect(decoded.messages.map(\.path) == ["/a", "/b", "/c", "/d"])
        #expect(decoded.messages.map(\.body) == [[], Array("abc".utf8), Array("hi".utf8), []])
        #expect(decoded.messages.allSatisfy { $0.complete })
        #expect(decoded.messages.map(\.keepAlive) == [true, true, true, false])
    }

    @Test func headerNamesAreCaseInsensitiveAndMayRepeat() {
        let decoded = decodeEveryWay("GET / HTTP/1.1\r\nHOST: x\r\nX-Tag: a\r\nx-tag:  b  \r\n\r\n")
        #expect(decoded.messages[0].headers == ["host=x", "x-tag=a", "x-tag=b"])
        let storage = RequestHeadStorage()
        let head = try? Array("GET / HTTP/1.1\r\nHOST: x\r\nX-Tag: a\r\nx-tag: b\r\n\r\n".utf8).withUnsafeBytes {
            try HeadParser.parse($0, into: storage)
        }
        #expect(head?.headers["x-TAG"] == "a")
        #expect(head?.headers.values("X-Tag") == ["a", "b"])
    }

    @Test func http10ClosesUnlessAskedToKeepAlive() {
        #expect(decodeEveryWay("GET / HTTP/1.0\r\n\r\n").messages[0].keepAlive == false)
        #expect(decodeEveryWay("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").messages[0].keepAlive == true)
        #expect(decodeEveryWay("GET / HTTP/1.1\r\nHost: x\r\nConnection: foo, close\r\n\r\n").messages[0].keepAlive == false)
    }

    @Test func expectContinueOnlyForHTTP11() {
        #expect(decodeEveryWay("PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\nx").messages[0].expectsContinue)
        #expect(!decodeEveryWay("PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx").messages[0].expectsContinue)
    }

    @Test func leadingEmptyLinesAreToleratedButABareLineFeedIsRefused() {
        let decoded = decodeEveryWay("\r\n\r\nGET /x HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(decoded.error == nil)
        #expect(decoded.messages.map(\.path) == ["/x"])
        // A proxy in front that ends lines at CRLF only would see other headers (security finding).
        for text in ["GET /x HTTP/1.1\nHost: x\n\n", "GET /x HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n"] {
            #expect(decodeEveryWay(text).error?.status.code == 400)
        }
    }

    @Test(arguments: ["", "a, b", "a b", "a/b", "a@b"])
    func anInvalidHostIsA400(host: String) {
        #expect(decodeEveryWay("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n").error?.status.code == 400)
    }

    @Test func validHostsPass() {
        for host in ["example.com", "127.0.0.1:8080", "[::1]:80", "xn--bcher-kva.example"] {
            #expect(decodeEveryWay("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n").error == nil, "\(host)")
        }
    }

    @Test func twoAuthorizationHeadersAreA400() {
        let decoded = decodeEveryWay("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n")
        #expect(decoded.error?.status.code == 400)
    }

    @Test func absoluteFormAndAsteriskTargets() {
        #expect(decodeEveryWay("GET http://h:1/p?q HTTP/1.1\r\nHost: h\r\n\r\n").messages[0].path == "/p")
        // RFC 3986: the authority ends at "?": the path is "/", never one found in the query.
        let query = decodeEveryWay("GET http://a?x=/healthz HTTP/1.1\r\nHost: a\r\n\r\n").messages[0]
        #expect(query.path == "/" && query.query == "x=/healthz")
        #expect(decodeEveryWay("GET http:///p HTTP/1.1\r\nHost: a\r\n\r\n").error?.status.code == 400)
        #expect(decodeEveryWay("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n").messages[0].path == "*")
    }

    @Test func identicalContentLengthsAreOne() {
        let decoded = decodeEveryWay("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\nab")
        #expect(decoded.error == nil)
        #expect(decoded.messages[0].body == Array("ab".utf8))
    }

    /// Each malformed request and the status it must get.
    @Test(arguments: [
        ("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400),
        ("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
        ("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\n", 400),
        ("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
        ("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
        ("PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        ("PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 501),
        ("PUT / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX-A : 1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\rX: 1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: a\u{01}b\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("GET / http/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET nopath HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("G@T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nExpect: something\r\n\r\n", 417),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n", 413),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n;ext\r\n", 400),
    ])
    func rejections(request: String, status: Int) {
        let decoded = decodeEveryWay(request)
        #expect(decoded.error?.status.code == status, "\(request.debugDescription)")
    }

    @Test func headTooLargeIs431() {
        let big = "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 2000) + "\r\n\r\n"
        #expect(decodeEveryWay(big, maxHeadBytes: 1024).error?.status.code == 431)
        #expect(decodeEveryWay(big, maxHeadBytes: 4096).error == nil)
        // A head that never ends is refused once it passes the limit, not buffered forever.
        let endless = "GET / HTTP/1.1\r\n" + String(repeating: "X-A: b\r\n", count: 300)
        #expect(decodeEveryWay(endless, maxHeadBytes: 1024).error?.status.code == 431)
    }

    @Test func headStorageIsReusedWhenNobodyHoldsIt() throws {
        var decoder = RequestDecoder(maxHeadBytes: 1024)
        let input = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var storages: [ObjectIdentifier] = []
        var offset = 0
        var held: RequestHead?
        for round in 0..<2 {
            let step = try input.withUnsafeBytes { try decoder.next(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            guard case .head(let head) = step.event else { Issue.record("expected a head"); return }
            storages.append(ObjectIdentifier(head.headers.storage))
            if round == 0 { held = head } // still held: the next head must not overwrite it
            offset += step.consumed
            _ = try input.withUnsafeBytes { try decoder.next(UnsafeRawBufferPointer(rebasing: $0[offset...])) } // .end
        }
        #expect(storages[0] != storages[1])
        #expect(held?.path == "/a")
        #expect(held?.headers["host"] == "x")
    }
}
