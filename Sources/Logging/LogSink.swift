#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where log lines go: a file descriptor (stderr by default), written in batches so that a
/// busy server makes one write per batch instead of one per request. Lines are appended under
/// a lock and flushed when the batch is large, when `flush()` is called (a timer does so),
/// and at once for lines that must not wait.
public final class LogSink: Sendable {
    private struct State {
        var fd: Int32
        var pending: [UInt8]
    }

    private let state: Mutex<State>
    private let batchBytes: Int

    public init(fd: Int32 = STDERR_FILENO, batchBytes: Int = 32 * 1024) {
        var pending = [UInt8]()
        pending.reserveCapacity(batchBytes * 2)
        self.state = Mutex(State(fd: fd, pending: pending))
        self.batchBytes = batchBytes
    }

    /// Appends one line, built in place by `build` (which must end it with a newline), to the
    /// batch. Writes the batch when it is full or `immediately` is set.
    public func append(immediately: Bool = false, _ build: (inout [UInt8]) -> Void) {
        state.withLock { state in
            build(&state.pending)
            if immediately || state.pending.count >= batchBytes {
                Self.drain(&state)
            }
        }
    }

    /// Writes whatever is batched.
    public func flush() {
        state.withLock { Self.drain(&$0) }
    }

    /// Points the sink at another descriptor (log reopening), flushing first. Returns the old one.
    public func redirect(to fd: Int32) -> Int32 {
        state.withLock { state in
            Self.drain(&state)
            let old = state.fd
            state.fd = fd
            return old
        }
    }

    private static func drain(_ state: inout State) {
        guard !state.pending.isEmpty else { return }
        state.pending.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(state.fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    break // a log that cannot be written must not take the server down
                }
            }
        }
        state.pending.removeAll(keepingCapacity: true)
    }
}

/// Writes text straight to standard error, unbatched: for the few lines a person or a script
/// waits for (`listening on …`, usage errors).
public func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(STDERR_FILENO, raw.baseAddress! + offset, raw.count - offset)
            if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { break }
        }
    }
}
