import CNTCurl
import NTCurlRuntime
import Foundation
import NTHashing
#if canImport(Glibc)
import Glibc
#endif

/// What a request sends: nothing, bytes in memory, or a region of a file, with the body's
/// SHA-256 (hex) that SigV4 signs as `x-amz-content-sha256`.
public enum ObjectPayload: Sendable {
    case none
    case bytes([UInt8])
    /// `length` bytes of `fd` from `offset`, read with pread (the descriptor stays the caller's).
    case file(fd: Int32, offset: Int64, length: Int64, sha256: String)

    var length: Int64 {
        switch self {
        case .none: 0
        case .bytes(let bytes): Int64(bytes.count)
        case .file(_, _, let length, _): length
        }
    }

    var sha256: String {
        switch self {
        case .none: Self.emptySHA256
        case .bytes(let bytes): ByteEncoding.hex(StreamingDigest.hash(.sha256, bytes))
        case .file(_, _, _, let sha256): sha256
        }
    }

    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
}

/// One request to the bucket, described.
struct S3Request {
    var method: String
    var url: String
    var headers: [(name: String, value: String)] = []
    var payload: ObjectPayload = .none
    /// What it does, for /metrics.
    var operation: S3Operation
    /// What the request is, for error messages ("PUT panoramas/x").
    var what: String
}

/// The calls toursd makes on a bucket, as /metrics labels them.
enum S3Operation: String {
    case put, get, head, delete, list
    case startMultipart = "start_multipart", putPart = "put_part", completeMultipart = "complete_multipart"
    case abortMultipart = "abort_multipart", listMultipart = "list_multipart", createBucket = "create_bucket"
}

/// What the bucket answered: the status, the headers (names lowercased) and, unless it was
/// handed to a sink, the body.
struct S3Answer {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
}

/// How long a transfer may take to connect and how long it may stall (no byte either way).
public struct TransferTimeouts: Sendable, Equatable {
    public var connectMs: Int
    public var stallSeconds: Int

    public init(connectMs: Int, stallSeconds: Int) {
        self.connectMs = connectMs
        self.stallSeconds = stallSeconds
    }
}

/// A libcurl easy handle, used by one transfer thread only: kept between requests so the
/// connection to the store is reused (a TLS handshake per part would cost more than the part).
/// Each request is signed with AWS SigV4 by libcurl; the payload's SHA-256 is set by us, which
/// libcurl then signs (7.88 computes none for bodies it streams).
final class S3Transfer {
    private let handle: UnsafeMutableRawPointer
    private let settings: BucketSettings
    private let timeouts: TransferTimeouts
    /// Bodies of error answers and XML documents are kept up to this many bytes.
    static let maxAnswerBytes = 8 << 20

    init?(settings: BucketSettings, timeouts: TransferTimeouts) {
        guard CurlRuntime.startFailure == nil, let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.settings = settings
        self.timeouts = timeouts
    }

    deinit { curl_easy_cleanup(handle) }

    /// Performs `request`; a 2xx body goes to `sink` when one is given (false from it stops
    /// the transfer), else into the answer. Throws `.unavailable` when no answer came.
    func perform(_ request: S3Request, sink: ((UnsafeRawBufferPointer) -> Bool)? = nil) throws(ObjectStoreError) -> S3Answer {
        curl_easy_reset(handle)
        let state = TransferState(payload: request.payload, sink: sink, handle: handle)
        let context = Unmanaged.passRetained(state)
        defer { context.release() }
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        var headers = request.headers
        headers.append(("x-amz-content-sha256", request.payload.sha256))
        if let token = settings.credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        if !headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            // libcurl would send form-urlencoded, which some stores keep (moto stores such a PUT empty).
            headers.append(("Content-Type", "application/octet-stream"))
        }
        // libcurl's Expect: 100-continue stays: an "Expect:" to drop it would be signed as an
        // empty header the store never sees, and the 100 lets a refusal come before the body.
        for header in headers { list = curl_slist_append(list, "\(header.name): \(header.value)") }

        _ = nt_curl_easy_setopt_string(handle, CURLOPT_URL, request.url)
        _ = nt_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        _ = nt_curl_easy_setopt_string(handle, CURLOPT_AWS_SIGV4, "aws:amz:\(settings.region):s3")
        _ = nt_curl_easy_setopt_string(handle, CURLOPT_USERNAME, settings.credentials.accessKey)
        _ = nt_curl_easy_setopt_string(handle, CURLOPT_PASSWORD, settings.credentials.secretKey)
        _ = nt_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = nt_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = nt_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = nt_curl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeouts.connectMs)
        _ = nt_curl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = nt_curl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, timeouts.stallSeconds)
        _ = nt_curl_easy_setopt_string(handle, CURLOPT_USERAGENT, "toursd")
        _ = nt_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context.toOpaque())
        _ = nt_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context.toOpaque())
        _ = nt_curl_easy_setopt_write_callback(handle) { data, size, count, context in
            guard let context, let data else { return 0 }
            let state = Unmanaged<TransferState>.fromOpaque(context).takeUnretainedValue()
            return state.received(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        }
        _ = nt_curl_easy_setopt_header_callback(handle) { data, size, count, context in
            guard let context, let data else { return 0 }
            let state = Unmanaged<TransferState>.fromOpaque(context).takeUnretainedValue()
            state.header(UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
        switch request.method {
        case "GET": break
        case "HEAD": _ = nt_curl_easy_setopt_long(handle, CURLOPT_NOBODY, 1)
        case "PUT":
            _ = nt_curl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
            _ = nt_curl_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.payload.length))
        case "POST":
            _ = nt_curl_easy_setopt_long(handle, CURLOPT_POST, 1)
            _ = nt_curl_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.payload.length))
        default:
            _ = nt_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        }
        if request.method == "PUT" || request.method == "POST" {
            _ = nt_curl_easy_setopt_pointer(handle, CURLOPT_READDATA, context.toOpaque())
            _ = nt_curl_easy_setopt_read_callback(handle) { buffer, size, count, context in
                guard let context, let buffer else { return Int(CURL_READFUNC_ABORT) }
                let state = Unmanaged<TransferState>.fromOpaque(context).takeUnretainedValue()
                return state.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
            }
        }
        let result = curl_easy_perform(handle)
        var status = 0
        _ = nt_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if result != CURLE_OK {
            if let failure = state.readFailure { throw .unavailable("\(request.what): reading the body: \(failure)") }
            // A sink that stopped the transfer: the caller knows why.
            if result == CURLE_WRITE_ERROR, state.sinkStopped { return S3Answer(status: status, headers: state.headers, body: []) }
            throw .unavailable("\(request.what): \(String(cString: curl_easy_strerror(result)))")
        }
        return S3Answer(status: status, headers: state.headers, body: state.body)
    }
}

/// What one transfer's callbacks share: the body read out, the answer coming in.
private final class TransferState {
    let payload: ObjectPayload
    let sink: ((UnsafeRawBufferPointer) -> Bool)?
    let handle: UnsafeMutableRawPointer
    var sent: Int64 = 0
    var headers: [String: String] = [:]
    var body: [UInt8] = []
    var readFailure: String?
    var sinkStopped = false

    init(payload: ObjectPayload, sink: ((UnsafeRawBufferPointer) -> Bool)?, handle: UnsafeMutableRawPointer) {
        self.payload = payload
        self.sink = sink
        self.handle = handle
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let wanted = Int(min(Int64(buffer.count), payload.length - sent))
        guard wanted > 0 else { return 0 }
        switch payload {
        case .none: return 0
        case .bytes(let bytes):
            bytes.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + Int(sent), byteCount: wanted)
            }
            sent += Int64(wanted)
            return wanted
        case .file(let fd, let offset, _, _):
            while true {
                let count = pread(fd, buffer.baseAddress, wanted, off_t(offset + sent))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    readFailure = count == 0 ? "the file ended early" : String(cString: strerror(errno))
                    return Int(CURL_READFUNC_ABORT)
                }
                sent += Int64(count)
                return count
            }
        }
    }

    func header(_ line: UnsafeRawBufferPointer) {
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("HTTP/") { headers = [:]; return } // a new answer (after a 100)
        guard let colon = text.firstIndex(of: ":") else { return }
        headers[text[..<colon].lowercased()] = text[text.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func received(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var status = 0
        _ = nt_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if let sink, (200...299).contains(status) {
            guard sink(bytes) else { sinkStopped = true; return false }
            return true
        }
        guard body.count + bytes.count <= S3Transfer.maxAnswerBytes else { return false }
        body.append(contentsOf: bytes)
        return true
    }
}
