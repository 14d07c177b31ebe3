#if canImport(Glibc)
import Glibc
#endif

/// A loopback port held by a socket that is bound but not listening: connecting to it is
/// refused (a server that is down), and no other process can be given it until `release()`,
/// when a server can start on it. (A stopped server's port, by contrast, may go to another
/// test's server at once, whose answers a client would take for its own server's.)
public final class PortReservation {
    public let port: UInt16
    private var fd: Int32

    /// `port`: a given one (a server's, just stopped), or 0 for one the system picks.
    public init(port given: UInt16 = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = given.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            throw ToursdProcess.Failure(description: "cannot reserve a port: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Lets the port go, for a server to listen on it now.
    public func release() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }

    deinit { release() }
}
