import NTAPIModel
import Foundation

/// One request the queue sends. Bodies are bytes held in memory (small JSON) or a range of a
/// file, streamed from disk as libcurl asks for it (never read whole into memory).
struct HTTPRequest: Sendable {
    enum Body: Sendable, Equatable {
        case none
        case bytes([UInt8])
        case file(path: String, offset: Int64, length: Int64)

        var length: Int64 {
            switch self {
            case .none: return 0
            case .bytes(let bytes): return Int64(bytes.count)
            case .file(_, _, let length): return length
            }
        }
    }

    /// Where a successful answer's body goes: memory (up to `limit` bytes), a file (written
    /// and fsynced as it arrives), or nowhere (an upload whose answer nobody reads, however
    /// large: a plan's answer is its floor with every outline). Error answers always come to
    /// memory. Larger than its limit, an answer fails the transfer rather than keep part of it.
    enum Sink: Sendable, Equatable {
        case memory(limit: Int)
        case file(path: String, limit: Int64)
        case discard
    }

    var method: String
    var url: String
    var headers: [(name: String, value: String)]
    var body: Body
    var sink: Sink

    init(_ method: String, _ url: String, headers: [(name: String, value: String)] = [], body: Body = .none,
         sink: Sink = .memory(limit: TransferLimits.maxResponseBytes)) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.sink = sink
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A server's answer: status, headers by lowercased name, and the (small) body.
struct HTTPResponse: Sendable, Equatable {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]

    init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    func header(_ name: String) -> String? { headers[name.lowercased()] }

    var isSuccess: Bool { (200..<300).contains(status) }

    /// The body read as one of the API's documents; a body that is not one is the server's
    /// fault (`transport`, retryable).
    func document<T>(_ read: (JSONValue) throws(InvalidDocument) -> T) throws(NoughtyToursError) -> T {
        do {
            return try read(try JSONReader.parse(body))
        } catch let error as InvalidDocument {
            throw .transport("the server's answer is not the document docs/api.md describes: \(error.message)")
        } catch {
            throw .transport("the server's answer is not JSON: \((error as? JSONReader.Failure)?.message ?? "\(error)")")
        }
    }

    /// An error answer as the library's error: docs/api.md's JSON error body when there is one.
    var error: NoughtyToursError {
        guard let document = try? document(ErrorDocument.init) else {
            return .server(status: status, code: "http_\(status)", message: String(decoding: body.prefix(200), as: UTF8.self))
        }
        return .server(status: status, code: document.code, message: document.message)
    }

    /// `Retry-After` in seconds (RFC 9110 delay-seconds form), when present.
    var retryAfter: Duration? {
        header("retry-after").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { .seconds(max(0, $0)) }
    }
}

/// Byte progress of one transfer.
typealias ProgressHandler = @Sendable (_ sent: Int64, _ total: Int64) -> Void
