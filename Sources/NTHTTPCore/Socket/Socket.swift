#if canImport(Glibc)
import Glibc
#endif

/// A failed socket call, with the errno it gave.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    public let call: String
    public let errno: Int32

    init(_ call: String, errno: Int32 = Glibc.errno) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// An IPv4 or IPv6 address and port.
public struct SocketAddress: Sendable, CustomStringConvertible {
    var storage: sockaddr_storage
    var length: socklen_t

    /// Parses a numeric IPv4 or IPv6 host ("127.0.0.1", "::1", "0.0.0.0", "::").
    public init(host: String, port: UInt16) throws {
        storage = sockaddr_storage()
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            storage = Self.storage(holding: v4)
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if inet_pton(AF_INET6, host.trimmingBrackets, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            storage = Self.storage(holding: v6)
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            throw SocketError("inet_pton(\(host))", errno: EINVAL)
        }
    }

    /// A sockaddr_storage whose first bytes are `address`.
    private static func storage<Address>(holding address: Address) -> sockaddr_storage {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { destination in
            withUnsafeBytes(of: address) { destination.copyMemory(from: $0) }
        }
        return storage
    }

    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    var family: Int32 { Int32(storage.ss_family) }

    public var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            family == AF_INET6
                ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    /// The host in numeric form, IPv6 without brackets.
    public var host: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
            } else {
                var address = raw.load(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
            }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// "127.0.0.1:8080" or "[::1]:8080".
    public var description: String {
        family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

private extension String {
    var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}

/// The socket system calls the server makes, each with its error handling in one place.
enum Socket {
    /// A non-blocking listening TCP socket bound to `address`; returns it and the bound
    /// address (with the port the OS chose for port 0).
    static func listen(_ address: SocketAddress, backlog: Int32) throws(SocketError) -> (fd: Int32, bound: SocketAddress) {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        do throws(SocketError) {
            var one: Int32 = 1
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw SocketError("setsockopt(SO_REUSEADDR)")
            }
            var address = address
            let bindResult = withUnsafePointer(to: &address.storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.length) }
            }
            guard bindResult == 0 else { throw SocketError("bind(\(address))") }
            guard Glibc.listen(fd, backlog) == 0 else { throw SocketError("listen") }
            try setNonBlocking(fd)
            var bound = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let nameResult = withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard nameResult == 0 else { throw SocketError("getsockname") }
            return (fd, SocketAddress(storage: bound, length: length))
        } catch {
            close(fd)
            throw error
        }
    }

    /// The peer's IP address of a connected socket: 4 bytes (IPv4, also when mapped into
    /// IPv6) or 16; nil when it cannot be read.
    static func peerAddress(_ fd: Int32) -> [UInt8]? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: &storage) { raw -> [UInt8]? in
            switch family {
            case AF_INET:
                var address = raw.load(as: sockaddr_in.self).sin_addr
                return withUnsafeBytes(of: &address) { Array($0) }
            case AF_INET6:
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                return ClientAddress.unmapped(withUnsafeBytes(of: &address) { Array($0) })
            default:
                return nil
            }
        }
    }

    enum AcceptResult {
        case accepted(Int32)
        case wouldBlock
        /// Out of descriptors or memory: retry later, not a reason to stop listening.
        case exhausted(SocketError)
        case failed(SocketError)
    }

    /// Accepts one connection, made non-blocking and close-on-exec, with Nagle off (responses
    /// are written whole, so coalescing only adds latency). Glibc's module lacks accept4.
    static func accept(_ listener: Int32) -> AcceptResult {
        while true {
            let fd = Glibc.accept(listener, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                do {
                    try setNonBlocking(fd)
                } catch {
                    close(fd)
                    return .failed(error)
                }
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return .accepted(fd)
            }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .exhausted(SocketError("accept"))
            default: return .failed(SocketError("accept"))
            }
        }
    }

    static func setNonBlocking(_ fd: Int32) throws(SocketError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { throw SocketError("fcntl(O_NONBLOCK)") }
    }

    enum IOResult {
        case bytes(Int)
        case wouldBlock
        /// read: the peer closed its side (read() returned 0; errno is not consulted).
        case endOfStream
        case failed(Int32)
    }

    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(errno)
            }
        }
    }

    /// send() with MSG_NOSIGNAL: a closed peer gives EPIPE, never SIGPIPE.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> IOResult {
        while true {
            let count = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .bytes(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(errno)
            }
        }
    }

    /// Sends up to `count` bytes of `file` from `offset` without copying through user space.
    static func sendFile(_ fd: Int32, file: Int32, offset: inout Int64, count: Int) -> IOResult {
        while true {
            var position = off_t(offset)
            let sent = sendfile(fd, file, &position, count)
            if sent > 0 {
                offset = Int64(position)
                return .bytes(sent)
            }
            if sent == 0 { return .endOfStream } // the file is shorter than announced
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(errno)
            }
        }
    }

    /// Half-closes: the peer sees the end of our stream, and we can still read what it sends.
    static func shutdownWrite(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
    }
}
