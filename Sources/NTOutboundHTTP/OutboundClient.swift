import CNTCurl
import NTCurlRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a receiver answered: its status, and how long the exchange took.
public struct OutboundAnswer: Sendable, Equatable {
    public let status: Int
    public let latencyMs: Int

    public init(status: Int, latencyMs: Int) {
        self.status = status
        self.latencyMs = latencyMs
    }
}

/// Why a request got no answer (the name did not resolve, the connection failed or timed out).
public struct OutboundFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let latencyMs: Int
    public var description: String { message }

    public init(message: String, latencyMs: Int) {
        self.message = message
        self.latencyMs = latencyMs
    }
}

/// POSTs to servers the daemon does not trust (tenants' webhook receivers), through one
/// libcurl easy handle kept by one thread: the next POST to the same host and port goes over
/// the connection the last one left open, TLS session and all, instead of a new one each.
/// Blocking: called on a thread of its own pool (the webhook deliveries'), never a loop or
/// handler thread.
public final class OutboundClient {
    private let handle: UnsafeMutableRawPointer

    public init() throws(OutboundFailure) {
        guard CurlRuntime.startFailure == nil, let handle = curl_easy_init() else {
            throw OutboundFailure(message: "libcurl could not start: \(CurlRuntime.startFailure ?? "no handle")", latencyMs: 0)
        }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    /// The numeric addresses `host` resolves to (blocking, like the post).
    public static func resolve(_ host: String) -> Result<[String], OutboundFailure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &found)
        guard status == 0, let first = found else {
            return .failure(OutboundFailure(message: "\(host) did not resolve: \(String(cString: gai_strerror(status)))", latencyMs: 0))
        }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(current.pointee.ai_addr, current.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !addresses.contains(address) { addresses.append(address) }
            }
            entry = current.pointee.ai_next
        }
        return .success(addresses)
    }

    /// Resolves `host`, then POSTs `body` to `url` on its first address, unless `refusal` (given
    /// every address it resolved to) says why not.
    public func post(url: String, host: String, port: Int, headers: [(name: String, value: String)], body: [UInt8], timeoutMs: Int,
                     maxResponseBytes: Int, refusal: ([String]) -> String? = { _ in nil }) -> Result<OutboundAnswer, OutboundFailure> {
        switch Self.resolve(host) {
        case .failure(let failure):
            return .failure(failure)
        case .success(let addresses):
            guard let address = addresses.first else { return .failure(OutboundFailure(message: "\(host) has no address", latencyMs: 0)) }
            if let refused = refusal(addresses) { return .failure(OutboundFailure(message: refused, latencyMs: 0)) }
            return post(url: url, host: host, port: port, address: address, headers: headers, body: body, timeoutMs: timeoutMs,
                        maxResponseBytes: maxResponseBytes)
        }
    }

    /// POSTs `body` to `url`, connecting to `address` for its host (the address the caller
    /// checked: no second lookup), with `headers`. No redirect is followed; the answer's body
    /// is read up to `maxResponseBytes` and dropped; the whole exchange takes at most
    /// `timeoutMs`.
    /// A connection kept open is reused only for the same host and port; the pinned address
    /// replaces the one the last POST there pinned, for any new connection.
    public func post(url: String, host: String, port: Int, address: String, headers: [(name: String, value: String)],
                     body: [UInt8], timeoutMs: Int, maxResponseBytes: Int) -> Result<OutboundAnswer, OutboundFailure> {
        let began = ContinuousClock.now
        func elapsed() -> Int {
            let taken = ContinuousClock.now - began
            return Int(taken.components.seconds * 1000 + taken.components.attoseconds / 1_000_000_000_000_000)
        }
        // The last POST's options go; its open connections and TLS sessions stay.
        curl_easy_reset(handle)
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers { list = curl_slist_append(list, "\(header.name): \(header.value)") }
        list = curl_slist_append(list, "Expect:") // no 100-continue round trip
        defer { curl_slist_free_all(list) }
        let pinned = curl_slist_append(nil, "\(host):\(port):\(address.contains(":") ? "[\(address)]" : address)")
        defer { curl_slist_free_all(pinned) }
        let sink = ResponseSink(limit: maxResponseBytes)
        let unmanaged = Unmanaged.passRetained(sink)
        defer { unmanaged.release() }
        let result: CURLcode = body.withUnsafeBytes { bytes in
            _ = nt_curl_easy_setopt_string(handle, CURLOPT_URL, url)
            _ = nt_curl_easy_setopt_slist(handle, CURLOPT_RESOLVE, pinned)
            _ = nt_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
            _ = nt_curl_easy_setopt_long(handle, CURLOPT_POST, 1)
            _ = nt_curl_easy_setopt_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            _ = nt_curl_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
            _ = nt_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
            _ = nt_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = nt_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
            _ = nt_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMs)
            _ = nt_curl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeoutMs)
            _ = nt_curl_easy_setopt_string(handle, CURLOPT_USERAGENT, "toursd-webhooks")
            _ = nt_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, unmanaged.toOpaque())
            _ = nt_curl_easy_setopt_write_callback(handle) { data, size, count, context in
                guard let context else { return 0 }
                let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
                let length = size * count
                sink.received += length
                // Past the limit the transfer stops; the status already came.
                return sink.received <= sink.limit ? length : 0
            }
            return curl_easy_perform(handle)
        }
        var status = 0
        _ = nt_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if status > 0 && (result == CURLE_OK || result == CURLE_WRITE_ERROR) {
            return .success(OutboundAnswer(status: status, latencyMs: elapsed()))
        }
        return .failure(OutboundFailure(message: String(cString: curl_easy_strerror(result)), latencyMs: elapsed()))
    }
}

/// How much of an answer's body has come (the rest is not read).
private final class ResponseSink {
    let limit: Int
    var received = 0
    init(limit: Int) { self.limit = limit }
}
