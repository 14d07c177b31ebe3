#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A listening socket on 127.0.0.1, on a port the OS picks: what the test servers of plain
/// sockets (FaultProxy, HookReceiver) accept on.
struct LoopbackListener {
    let fd: Int32
    let port: UInt16

    init(backlog: Int32 = 64) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, backlog) == 0 else {
            Glibc.close(fd)
            throw RawClient.Failure(description: "listening on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Accepts on a thread of its own until `close`, each connection served on a thread of its
    /// own; `receiveTimeoutSeconds`: how long a read on one may wait (nil: as long as it takes).
    func serveEach(receiveTimeoutSeconds: Int?, _ serve: @escaping @Sendable (Int32) -> Void) {
        let fd = fd
        Thread.detachNewThread {
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { if errno == EINTR { continue } else { return } }
                if let receiveTimeoutSeconds {
                    var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
                    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                }
                Thread.detachNewThread { serve(client) }
            }
        }
    }

    /// Ends the accept loop waiting on it.
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}
