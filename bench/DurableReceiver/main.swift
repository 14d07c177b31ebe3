// make bench: the durable reference toursd's uploads are measured against. The least a server
// must do to acknowledge an upload durably: read the body, hash it (SHA-256), write it to a
// temporary file, fdatasync it, rename it into place and fsync the directory, then answer.
// One blocking thread per connection, 1 MiB reads, no framework: what the disk and the CPU
// allow. Only what the bench sends is understood (PUTs with Content-Length).
//
//   DurableReceiver DIR     listens on 127.0.0.1 on a port the OS picks, prints it; stores in DIR
#if canImport(Glibc)
import Glibc
#endif
import NTHashing

/// A plain type, not top-level code: closures there would be main-actor isolated.
enum DurableReceiver {
    static func main(_ arguments: [String]) -> Never {
        guard arguments.count == 2 else { fail("usage: DurableReceiver DIR") }
        signal(SIGPIPE, SIG_IGN)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 1024) == 0 else { fail("DurableReceiver: cannot listen") }
        let port = "\(UInt16(bigEndian: address.sin_port))\n"
        _ = write(1, port, port.utf8.count)
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            var thread = pthread_t()
            let connection = Unmanaged.passRetained(Connection(fd: fd, directory: arguments[1])).toOpaque()
            pthread_create(&thread, nil, { raw in
                Unmanaged<Connection>.fromOpaque(raw!).takeRetainedValue().serve()
                return nil
            }, connection)
            pthread_detach(thread)
        }
    }

    static func fail(_ message: String) -> Never {
        _ = write(2, message + "\n", message.utf8.count + 1)
        exit(2)
    }
}

/// One connection, on a thread of its own.
final class Connection {
    let fd: Int32
    let directory: String
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    private var pending = 0
    private var stored = 0

    init(fd: Int32, directory: String) {
        self.fd = fd
        self.directory = directory
    }

    deinit {
        buffer.deallocate()
        close(fd)
    }

    /// Requests until the client closes.
    func serve() {
        while let (headEnd, size, expectsContinue) = readHead() {
            if expectsContinue { _ = write(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) }
            stored += 1
            let name = "\(directory)/\(fd)-\(stored)"
            let file = open(name + ".part", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            let digest = StreamingDigest(.sha256)
            // Body bytes that came with the head, then the rest in 1 MiB reads.
            let early = min(pending - headEnd, size)
            var chunk = UnsafeRawBufferPointer(rebasing: buffer[headEnd..<(headEnd + early)])
            var left = size
            var pipelined = pending - headEnd - early
            while true {
                digest.update(chunk)
                var written = 0
                while written < chunk.count { written += max(0, write(file, chunk.baseAddress! + written, chunk.count - written)) }
                left -= chunk.count
                if left == 0 { break }
                let count = read(fd, buffer.baseAddress!, min(buffer.count, left))
                guard count > 0 else {
                    close(file)
                    unlink(name + ".part")
                    return
                }
                chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                pipelined = 0
            }
            _ = digest.finish()
            fdatasync(file)
            close(file)
            rename(name + ".part", name)
            let directoryFD = open(directory, O_RDONLY | O_DIRECTORY)
            fsync(directoryFD)
            close(directoryFD)
            let answer = "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
            _ = write(fd, answer, answer.utf8.count)
            if pipelined > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + headEnd + early, byteCount: pipelined) }
            pending = pipelined
        }
    }

    /// The next head: where it ends in the buffer, the body's length, and whether the client
    /// waits for 100 Continue; nil when the client closed.
    private func readHead() -> (end: Int, size: Int, expectsContinue: Bool)? {
        while true {
            if pending >= 4 {
                for index in 0...(pending - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                    let head = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[0..<index]), as: UTF8.self).lowercased()
                    let lines = head.split(separator: "\r\n")
                    guard let field = lines.first(where: { $0.hasPrefix("content-length:") }),
                          let size = Int(field.dropFirst(15).filter { $0 != " " }) else { return nil }
                    return (index + 4, size, lines.contains { $0.hasPrefix("expect:") && $0.contains("100-continue") })
                }
            }
            let count = read(fd, buffer.baseAddress! + pending, buffer.count - pending)
            guard count > 0 else { return nil }
            pending += count
        }
    }
}

DurableReceiver.main(CommandLine.arguments)
