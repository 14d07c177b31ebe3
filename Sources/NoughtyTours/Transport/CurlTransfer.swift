#if canImport(Glibc)
import Glibc
#endif
import CNTCurl
import Foundation
import Synchronization

/// The libcurl options every transfer shares (from `SyncOptions`).
struct TransferLimits: Sendable {
    var connectTimeoutMilliseconds: Int
    /// A transfer slower than `lowSpeedBytesPerSecond` for `lowSpeedSeconds` is abandoned.
    var lowSpeedBytesPerSecond: Int
    var lowSpeedSeconds: Int
    /// 0: no cap.
    var maxSendBytesPerSecond: Int64
    var uploadBufferBytes: Int
    /// The largest answer kept in memory by default (the API's answers are small JSON).
    static let maxResponseBytes = 1 << 20
}

/// One libcurl easy handle and everything its callbacks touch: the request body's source,
/// the answer's status line, headers and body. Made on any thread; once added to the multi
/// handle, used only by the transport's thread.
final class CurlTransfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var fd: Int32 = -1
    private var source: HTTPRequest.Body
    /// Where the next body byte comes from (a file offset, or an index into the bytes).
    private var position: Int64 = 0
    private var remaining: Int64
    private var status = 0
    private var headers: [String: String] = [:]
    private var body: [UInt8] = []
    private let sink: HTTPRequest.Sink
    /// The file a successful answer is written to (`sink` .file), and how much it holds.
    private var output: Int32 = -1
    private var received: Int64 = 0
    private var writeFailure: NoughtyToursError?
    private let progress: ProgressHandler?
    private var reported: Int64 = -1
    /// Set once, by `perform`'s caller, before the transfer is handed to the loop.
    var completion: (@Sendable (Result<HTTPResponse, NoughtyToursError>) -> Void)?
    let cancelled = Atomic<Bool>(false)

    /// Prepares the handle; throws when a file cannot be opened or libcurl refuses an option.
    init(_ request: HTTPRequest, limits: TransferLimits, progress: ProgressHandler?) throws(NoughtyToursError) {
        guard let easy = curl_easy_init() else { throw .transport("libcurl could not make a handle") }
        self.easy = easy
        self.source = request.body
        self.remaining = request.body.length
        self.sink = request.sink
        self.progress = progress
        // A failure here leaves a whole object: deinit releases the handle (once).
        try configure(request, limits)
    }

    deinit { release() }

    private func release() {
        if fd >= 0 { close(fd); fd = -1 }
        if output >= 0 { close(output); output = -1 }
        if let headerList { curl_slist_free_all(headerList); self.headerList = nil }
        curl_easy_cleanup(easy)
    }

    private func configure(_ request: HTTPRequest, _ limits: TransferLimits) throws(NoughtyToursError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        try check(nt_curl_easy_setopt_string(easy, CURLOPT_URL, request.url), "URL")
        try check(nt_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        try check(nt_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, limits.connectTimeoutMilliseconds), "CONNECTTIMEOUT_MS")
        try check(nt_curl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, limits.lowSpeedBytesPerSecond), "LOW_SPEED_LIMIT")
        try check(nt_curl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, limits.lowSpeedSeconds), "LOW_SPEED_TIME")
        try check(nt_curl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1), "TCP_KEEPALIVE")
        try check(nt_curl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, me), "PRIVATE")
        try check(nt_curl_easy_setopt_header_callback(easy, Self.onHeader), "HEADERFUNCTION")
        try check(nt_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me), "HEADERDATA")
        try check(nt_curl_easy_setopt_write_callback(easy, Self.onBody), "WRITEFUNCTION")
        try check(nt_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me), "WRITEDATA")
        if progress != nil {
            try check(nt_curl_easy_setopt_long(easy, CURLOPT_NOPROGRESS, 0), "NOPROGRESS")
            try check(nt_curl_easy_setopt_xferinfo_callback(easy, Self.onProgress), "XFERINFOFUNCTION")
            try check(nt_curl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, me), "XFERINFODATA")
        }
        if limits.maxSendBytesPerSecond > 0 {
            try check(nt_curl_easy_setopt_off(easy, CURLOPT_MAX_SEND_SPEED_LARGE, curl_off_t(limits.maxSendBytesPerSecond)), "MAX_SEND_SPEED_LARGE")
        }
        if case .file(let path, _) = request.sink {
            output = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard output >= 0 else { throw .storageUnavailable(reason: "cannot write \(path): \(String(cString: strerror(errno)))") }
        }
        switch request.body {
        case .none:
            if request.method == "HEAD" { try check(nt_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1), "NOBODY") }
        case .bytes, .file:
            if case .file(let path, let offset, _) = request.body {
                fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { throw .invalidInput("cannot read \(path): \(String(cString: strerror(errno)))") }
                position = offset
            }
            // An upload of a known size: libcurl sends Content-Length and streams from onRead.
            try check(nt_curl_easy_setopt_long(easy, CURLOPT_UPLOAD, 1), "UPLOAD")
            try check(nt_curl_easy_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(remaining)), "INFILESIZE_LARGE")
            try check(nt_curl_easy_setopt_read_callback(easy, Self.onRead), "READFUNCTION")
            try check(nt_curl_easy_setopt_pointer(easy, CURLOPT_READDATA, me), "READDATA")
            try check(nt_curl_easy_setopt_long(easy, CURLOPT_UPLOAD_BUFFERSIZE, limits.uploadBufferBytes), "UPLOAD_BUFFERSIZE")
        }
        if request.method != "GET", request.method != "HEAD" {
            try check(nt_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method), "CUSTOMREQUEST")
        }
        var headers = request.headers
        if case .bytes = request.body {
            // libcurl asks "Expect: 100-continue" before any upload; a small body in memory is
            // better sent at once than after a round trip. Files keep it: the server can refuse
            // them (413, 401) before a byte is sent.
            headers.append(("Expect", ""))
        }
        for (name, value) in headers {
            guard let list = curl_slist_append(headerList, "\(name): \(value)") else { throw .transport("libcurl could not add a header") }
            headerList = list
        }
        if let headerList { try check(nt_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList), "HTTPHEADER") }
    }

    private func check(_ code: CURLcode, _ option: String) throws(NoughtyToursError) {
        guard code == CURLE_OK else {
            throw .transport("libcurl refused CURLOPT_\(option): \(String(cString: curl_easy_strerror(code)))")
        }
    }

    /// The outcome once libcurl says the transfer is done.
    func result(_ code: CURLcode) -> Result<HTTPResponse, NoughtyToursError> {
        guard code == CURLE_OK else {
            if case .invalidInput(let reason)? = readFailure { return .failure(.invalidInput(reason)) }
            if let writeFailure { return .failure(writeFailure) }
            return .failure(.transport(String(cString: curl_easy_strerror(code))))
        }
        // Only an interim answer (a 100 Continue, then the connection cut): no answer at all.
        guard status >= 200 else {
            return .failure(.transport(status == 0 ? "no answer from the server" : "the connection closed after an interim \(status) answer"))
        }
        if output >= 0, (200..<300).contains(status), fsync(output) != 0 {
            return .failure(.storageUnavailable(reason: "the answer could not be made durable: \(String(cString: strerror(errno)))"))
        }
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    private var readFailure: NoughtyToursError?

    // MARK: libcurl's callbacks (on the transport's thread)

    private static func transfer(_ pointer: UnsafeMutableRawPointer?) -> CurlTransfer {
        Unmanaged<CurlTransfer>.fromOpaque(pointer!).takeUnretainedValue()
    }

    private static let onRead: curl_read_callback = { buffer, size, count, user in
        transfer(user).read(into: buffer!, max: size * count)
    }

    private func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        let wanted = Int(min(Int64(max), remaining))
        guard wanted > 0 else { return 0 }
        switch source {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { raw in
                UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress! + Int(position), byteCount: wanted)
            }
            position += Int64(wanted)
            remaining -= Int64(wanted)
            return wanted
        case .file:
            var count: Int
            repeat { count = pread(fd, buffer, wanted, off_t(position)) } while count < 0 && errno == EINTR
            guard count > 0 else {
                // Shorter than its recorded size, or unreadable: the transfer stops, not retried.
                readFailure = .invalidInput("the file ended or failed at byte \(position): \(count < 0 ? String(cString: strerror(errno)) : "end of file")")
                return Int(CURL_READFUNC_ABORT)
            }
            position += Int64(count)
            remaining -= Int64(count)
            return count
        case .none:
            return 0
        }
    }

    private static let onHeader: curl_write_callback = { data, size, count, user in
        let length = size * count
        transfer(user).header(UnsafeRawBufferPointer(start: data, count: length))
        return length
    }

    private func header(_ line: UnsafeRawBufferPointer) {
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("HTTP/") {
            // A new status line (after a 100 Continue, say): the headers start again.
            let parts = text.split(separator: " ")
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers = [:]
        } else if let colon = text.firstIndex(of: ":") {
            headers[text[..<colon].lowercased()] = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }

    private static let onBody: curl_write_callback = { data, size, count, user in
        transfer(user).write(UnsafeRawBufferPointer(start: data, count: size * count))
    }

    /// Keeps a piece of the answer; a short count (0) stops the transfer.
    private func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        let success = (200..<300).contains(status)
        if case .discard = sink, success { return bytes.count }
        let limit: Int64
        switch sink {
        case .memory(let bytes): limit = Int64(bytes)
        case .file(_, let bytes): limit = success ? bytes : Int64(TransferLimits.maxResponseBytes)
        case .discard: limit = Int64(TransferLimits.maxResponseBytes)
        }
        received += Int64(bytes.count)
        guard received <= limit else {
            writeFailure = .transport("the answer is larger than \(limit) bytes")
            return 0
        }
        guard output >= 0, success else {
            body.append(contentsOf: bytes)
            return bytes.count
        }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(output, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                writeFailure = .storageUnavailable(reason: "writing the answer: \(String(cString: strerror(errno)))")
                return 0
            }
            offset += written
        }
        return bytes.count
    }

    private static let onProgress: curl_xferinfo_callback = { user, _, _, total, sent in
        let me = transfer(user)
        if me.cancelled.load(ordering: .relaxed) { return 1 } // aborts the transfer
        if Int64(sent) != me.reported {
            me.reported = Int64(sent)
            me.progress?(Int64(sent), Int64(total))
        }
        return 0
    }
}
