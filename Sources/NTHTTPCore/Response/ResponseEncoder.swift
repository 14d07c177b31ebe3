#if canImport(Glibc)
import Glibc
#endif
import NTLogging

/// Writes response heads into a connection's output buffer from preformatted bytes, with the
/// `Date` field formatted at most once a second per connection.
struct ResponseEncoder {
    private var dateSecond: Int64 = -1
    private var dateBytes: [UInt8] = []

    /// What the head says about the connection and the body.
    struct Framing {
        var keepAlive: Bool
        var version: HTTPVersion
        var isHeadRequest: Bool
    }

    /// Appends the status line and header section of `response`; returns whether body bytes
    /// follow on the wire.
    mutating func encodeHead(_ response: Response, requestID: RequestID, framing: Framing, routeHeaders: [HTTPField],
                             into out: inout [UInt8]) -> Bool {
        Self.appendStatusLine(response.status, into: &out)
        out.append(ascii: "Date: ")
        appendDate(&out)
        out.append(ascii: "\r\nX-Request-Id: ")
        requestID.write(into: &out)
        out.append(ascii: "\r\n")
        if let contentType = response.contentType {
            out.append(ascii: "Content-Type: ")
            out.append(utf8: contentType)
            out.append(ascii: "\r\n")
        }
        Self.appendFields(routeHeaders, into: &out)
        Self.appendFields(response.headers, into: &out)
        var sendsBody = response.status.allowsContent && !framing.isHeadRequest
        if response.status.allowsContent {
            switch response.body {
            case .empty:
                out.append(ascii: "Content-Length: 0\r\n")
            case .bytes(let bytes):
                out.append(ascii: "Content-Length: ")
                out.append(decimal: bytes.count)
                out.append(ascii: "\r\n")
            case .file(let region):
                out.append(ascii: "Content-Length: ")
                out.append(decimal: Int(region.length))
                out.append(ascii: "\r\n")
            case .chunked:
                // HTTP/1.0 has no chunked coding: the body ends when the connection closes.
                if framing.version == .http11 { out.append(ascii: "Transfer-Encoding: chunked\r\n") }
            }
        } else {
            sendsBody = false
        }
        if !framing.keepAlive {
            out.append(ascii: "Connection: close\r\n")
        } else if framing.version == .http10 {
            out.append(ascii: "Connection: keep-alive\r\n")
        }
        out.append(ascii: "\r\n")
        return sendsBody
    }

    /// IMF-fixdate (RFC 9110 §5.6.7), e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
    /// Appends an interim (1xx) answer (RFC 9110 §15.2): its status line and fields, no body.
    static func encodeInterim(_ status: HTTPStatus, headers: [HTTPField], into out: inout [UInt8]) {
        precondition((101...199).contains(status.code), "an interim answer is 1xx")
        appendStatusLine(status, into: &out)
        appendFields(headers, into: &out)
        out.append(ascii: "\r\n")
    }

    private static func appendStatusLine(_ status: HTTPStatus, into out: inout [UInt8]) {
        out.append(ascii: "HTTP/1.1 ")
        out.append(decimal: status.code)
        out.append(UInt8(ascii: " "))
        status.reason.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(ascii: "\r\n")
    }

    private static func appendFields(_ fields: [HTTPField], into out: inout [UInt8]) {
        for field in fields {
            out.append(utf8: field.name)
            out.append(ascii: ": ")
            out.append(utf8: field.value)
            out.append(ascii: "\r\n")
        }
    }

    private mutating func appendDate(_ out: inout [UInt8]) {
        let now = WallClockTime.now().seconds
        if now != dateSecond {
            dateSecond = now
            dateBytes = HTTPDate.format(now)
        }
        out.append(contentsOf: dateBytes)
    }
}

/// HTTP dates: IMF-fixdate (RFC 9110 §5.6.7), e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
public enum HTTPDate {
    public static func format(_ seconds: Int64) -> [UInt8] {
        var parts = tm()
        var time = time_t(seconds)
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var out = [UInt8]()
        out.reserveCapacity(29)
        out.append(utf8: days[Int(parts.tm_wday)])
        out.append(ascii: ", ")
        out.appendPadded(Int(parts.tm_mday), width: 2)
        out.append(UInt8(ascii: " "))
        out.append(utf8: months[Int(parts.tm_mon)])
        out.append(UInt8(ascii: " "))
        out.appendPadded(Int(parts.tm_year) + 1900, width: 4)
        out.append(UInt8(ascii: " "))
        out.appendPadded(Int(parts.tm_hour), width: 2)
        out.append(UInt8(ascii: ":"))
        out.appendPadded(Int(parts.tm_min), width: 2)
        out.append(UInt8(ascii: ":"))
        out.appendPadded(Int(parts.tm_sec), width: 2)
        out.append(ascii: " GMT")
        return out
    }

    public static func string(_ seconds: Int64) -> String {
        String(decoding: format(seconds), as: UTF8.self)
    }
}
