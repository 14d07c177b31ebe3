#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A webhook receiver on 127.0.0.1 for black-box tests, on plain sockets: each connection on a
/// thread of its own, requests one after another (keep-alive), each answered 200 after
/// `delay` (a slow receiver). It keeps what came: the path (`/hook/<name>` tells endpoints
/// apart), the headers, the body and the event's id from it. Any POST of JSON is taken (an
/// OTLP collector's too).
public final class HookReceiver: @unchecked Sendable {
    public struct Delivery: Sendable {
        public let path: String
        public let eventId: String
        /// Names lowercased.
        public let headers: [String: String]
        public let body: Data
    }

    public let port: UInt16
    private let listener: LoopbackListener
    private let delay: Double
    private let stopped = Atomic<Bool>(false)
    private let log = Mutex<[Delivery]>([])

    public init(delaySeconds: Double = 0) throws {
        delay = delaySeconds
        listener = try LoopbackListener()
        port = listener.port
        listener.serveEach(receiveTimeoutSeconds: 30) { [self] in serve($0) }
    }

    deinit { stop() }

    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        listener.close()
    }

    /// The URL of endpoint `name`.
    public func url(_ name: String = "hook") -> String { "http://127.0.0.1:\(port)/hook/\(name)" }

    /// What came, in order.
    public var received: [Delivery] { log.withLock { $0 } }

    /// Requests one after another until the sender closes (or is silent for 30 s).
    private func serve(_ client: Int32) {
        defer { close(client) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        for _ in 0..<100_000 where !stopped.load(ordering: .relaxed) {
            guard let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) else {
                let count = read(client, &chunk, chunk.count)
                guard count > 0 else { return }
                buffer += chunk[0..<count]
                continue
            }
            let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
            let lines = head.split(separator: "\r\n")
            let path = lines.first.map { String($0.split(separator: " ").dropFirst().first ?? "") } ?? ""
            let length = lines.first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            while buffer.count < end.upperBound + length {
                let count = read(client, &chunk, chunk.count)
                guard count > 0 else { return }
                buffer += chunk[0..<count]
            }
            let body = Data(buffer[end.upperBound..<(end.upperBound + length)])
            buffer.removeFirst(end.upperBound + length)
            let event = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["id"] as? String ?? ""
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            log.withLock { $0.append(Delivery(path: path, eventId: event, headers: headers, body: body)) }
            if delay > 0 { usleep(useconds_t(delay * 1_000_000)) }
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
            guard write(client, answer, answer.count) == answer.count else { return }
        }
    }
}
