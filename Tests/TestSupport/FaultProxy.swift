#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Faults injected at random into forwarded connections, each after a random number of bytes.
public struct Chaos: Sendable {
    /// The connection is reset mid-request.
    public var resetRate: Double
    /// The request stops flowing for `stallSeconds`, then the connection closes.
    public var stallRate: Double
    /// The server's answer is cut short (the server did the work; the client never hears it).
    public var truncateRate: Double
    public var stallSeconds: Double

    public init(resetRate: Double = 0.06, stallRate: Double = 0.02, truncateRate: Double = 0.05, stallSeconds: Double = 3) {
        self.resetRate = resetRate
        self.stallRate = stallRate
        self.truncateRate = truncateRate
        self.stallSeconds = stallSeconds
    }
}

/// What the proxy did to a forwarded connection.
public enum InjectedFault: String, Sendable, CaseIterable {
    case reset, stall, truncate
}

/// An HTTP proxy in front of a real server that answers chosen requests itself, with an
/// error status, and forwards the rest, optionally with random faults (`Chaos`). Each
/// forwarded request goes upstream on a connection of its own (with `Connection: close`), so
/// the rule sees every request.
public final class FaultProxy: @unchecked Sendable {
    /// Given a request's method and path (with its query), the status to answer instead of
    /// forwarding it, or nil to forward.
    public typealias Rule = @Sendable (_ method: String, _ path: String) -> Int?

    public let port: UInt16
    private let listener: LoopbackListener
    private let upstreamPort: UInt16
    private let rule: Rule
    private let stopped = Atomic<Bool>(false)
    /// The requests answered by the rule and forwarded, in order: "METHOD path status|forwarded".
    private let log = Mutex<[String]>([])
    private let forwardedBytes = Atomic<Int>(0)

    private let chaos: Chaos?
    private let injected = Mutex<[InjectedFault: Int]>([:])
    private let tunnels: Bool
    private let accepted = Atomic<Int>(0)
    /// Tunnels open now, and the most that were open at once.
    private let open = Mutex<(now: Int, most: Int)>((0, 0))

    /// `tunnels`: relay each connection as it is, keep-alive and all (no rule, no chaos), to
    /// count the connections a client opens.
    public init(upstreamPort: UInt16, chaos: Chaos? = nil, tunnels: Bool = false, rule: @escaping Rule = { _, _ in nil }) throws {
        self.upstreamPort = upstreamPort
        self.chaos = chaos
        self.tunnels = tunnels
        self.rule = rule
        listener = try LoopbackListener()
        port = listener.port
        // A request head that never comes ends the connection; a tunnel lives as long as its
        // client keeps it (idle between transfers, however long a loaded machine makes that).
        listener.serveEach(receiveTimeoutSeconds: tunnels ? nil : 10) { [self] client in
            accepted.add(1, ordering: .relaxed)
            serve(client)
        }
    }

    deinit { stop() }

    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        listener.close()
    }

    /// What the proxy did, one line per request.
    public var requests: [String] { log.withLock { $0 } }

    /// The client connections accepted so far.
    public var connectionsAccepted: Int { accepted.load(ordering: .relaxed) }

    /// The most tunnels that were open at the same moment (transfers running at once).
    public var mostOpenAtOnce: Int { open.withLock { $0.most } }

    /// The faults injected so far, by kind.
    public var faults: [InjectedFault: Int] { injected.withLock { $0 } }

    /// Every byte clients sent that went upstream (heads and bodies, whole or cut off).
    public var bytesForwarded: Int { forwardedBytes.load(ordering: .relaxed) }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// One client connection: requests one after another, each answered or forwarded.
    private func serve(_ client: Int32) {
        defer { close(client) }
        var buffer: [UInt8] = []
        if tunnels {
            open.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            defer { open.withLock { $0.now -= 1 } }
            forward(client, head: nil, pending: &buffer)
            return
        }
        for _ in 0..<10_000 {
            guard let headEnd = readHead(client, &buffer) else { return }
            let head = String(decoding: buffer[0..<headEnd], as: UTF8.self)
            buffer.removeFirst(headEnd)
            let lines = head.components(separatedBy: "\r\n")
            let requestLine = lines[0].split(separator: " ")
            guard requestLine.count >= 2 else { return }
            let method = String(requestLine[0]), path = String(requestLine[1])
            let length = lines.dropFirst().compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                return parts.count == 2 && parts[0].lowercased() == "content-length" ? Int(parts[1].trimmingCharacters(in: .whitespaces)) : nil
            }.first ?? 0
            if let status = rule(method, path) {
                log.withLock { $0.append("\(method) \(path) \(status)") }
                let expects = head.lowercased().contains("expect: 100-continue")
                if expects { writeAll(client, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
                // The body is read (and dropped) so the client sees the answer, not a reset.
                guard readBody(client, &buffer, length) else { return }
                let body = #"{"error":{"code":"injected","message":"injected by the test proxy","retryable":\#(status >= 500)}}"#
                let answer = "HTTP/1.1 \(status) Injected\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                writeAll(client, Array(answer.utf8))
                continue
            }
            log.withLock { $0.append("\(method) \(path) forwarded") }
            forward(client, head: lines, pending: &buffer)
            return
        }
    }

    /// A fault for the next forwarded connection, and after how many bytes, or nil.
    private func drawFault() -> (fault: InjectedFault, after: Int)? {
        guard let chaos else { return nil }
        let draw = Double.random(in: 0..<1)
        let fault: InjectedFault
        if draw < chaos.resetRate {
            fault = .reset
        } else if draw < chaos.resetRate + chaos.stallRate {
            fault = .stall
        } else if draw < chaos.resetRate + chaos.stallRate + chaos.truncateRate {
            fault = .truncate
        } else {
            return nil
        }
        injected.withLock { $0[fault, default: 0] += 1 }
        return (fault, fault == .truncate ? Int.random(in: 0..<64) : Int.random(in: 0..<(256 << 10)))
    }

    /// Sends the request upstream with `Connection: close` (or, with no head, tunnels the
    /// connection as it is), then relays both ways until upstream has answered and closed (or
    /// a drawn fault ends it). Both fds stay open until both relays are done, so neither
    /// thread can touch a number the other closed.
    private func forward(_ client: Int32, head lines: [String]?, pending: inout [UInt8]) {
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(upstream) }
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard connected == 0 else { return }
        let fault = lines == nil ? nil : drawFault()
        let kept = (lines ?? []).filter { !$0.isEmpty && !$0.lowercased().hasPrefix("connection:") }
        let first = (lines == nil ? [] : Array((kept.joined(separator: "\r\n") + "\r\nConnection: close\r\n\r\n").utf8)) + pending
        pending = []
        let requestLimit = fault.flatMap { $0.fault == .truncate ? nil : $0.after }
        let requestDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            defer { requestDone.signal() }
            var budget = requestLimit ?? Int.max
            guard pass(first, to: upstream, budget: &budget), relay(from: client, to: upstream, counted: true, budget: &budget) else {
                // The drawn fault, mid-request.
                if fault?.fault == .stall { Thread.sleep(forTimeInterval: chaos?.stallSeconds ?? 0) }
                if fault?.fault == .reset {
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0) // close() then sends RST
                    setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                }
                shutdown(upstream, Int32(SHUT_RDWR))
                shutdown(client, Int32(SHUT_RD))
                return
            }
            shutdown(upstream, Int32(SHUT_WR))
        }
        var responseBudget = fault?.fault == .truncate ? fault!.after : Int.max
        _ = relay(from: upstream, to: client, counted: false, budget: &responseBudget)
        shutdown(client, Int32(SHUT_RDWR))
        shutdown(upstream, Int32(SHUT_RDWR))
        requestDone.wait()
    }

    /// Sends what fits in `budget`; false when the budget ran out first (or the target closed).
    private func pass(_ bytes: [UInt8], to target: Int32, counted: Bool = true, budget: inout Int) -> Bool {
        let allowed = min(bytes.count, budget)
        budget -= allowed
        if counted { forwardedBytes.add(allowed, ordering: .relaxed) }
        return writeAll(target, Array(bytes[0..<allowed])) && allowed == bytes.count
    }

    /// Relays until the source ends (true), or `budget` bytes have passed or the target
    /// closed (false).
    private func relay(from source: Int32, to target: Int32, counted: Bool, budget: inout Int) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return true }
            guard pass(Array(chunk[0..<count]), to: target, counted: counted, budget: &budget) else { return false }
        }
    }

    private func readHead(_ fd: Int32, _ buffer: inout [UInt8]) -> Int? {
        while true {
            if let range = buffer.firstRange(of: Array("\r\n\r\n".utf8)) { return range.upperBound }
            guard fill(fd, &buffer), buffer.count < 65_536 else { return nil }
        }
    }

    private func readBody(_ fd: Int32, _ buffer: inout [UInt8], _ length: Int) -> Bool {
        while buffer.count < length { guard fill(fd, &buffer) else { return false } }
        buffer.removeFirst(length)
        return true
    }

    private func fill(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    @discardableResult
    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }
}
