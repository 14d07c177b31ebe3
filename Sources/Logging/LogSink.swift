#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Where log lines go: a file descriptor (stderr by default), written in batches so that a
/// busy server makes one write per batch instead of one per request. Lines are appended under
/// a lock; a full batch is handed, in order, to a writer queue, so no event loop waits for the
/// log file. `flush()` (a timer calls it) and lines that must not wait are written at once.
public final class LogSink: Sendable {
    private struct State {
        let fd: Int32
        var pending: [UInt8]
    }

    private let state: Mutex<State>
    private let batchBytes: Int
    private let writer = DispatchQueue(label: "log.writer")

    public init(fd: Int32 = STDERR_FILENO, batchBytes: Int = 32 * 1024) {
        var pending = [UInt8]()
        pending.reserveCapacity(batchBytes * 2)
        self.state = Mutex(State(fd: fd, pending: pending))
        self.batchBytes = batchBytes
    }

    /// Appends one line, built in place by `build` (which must end it with a newline), to the
    /// batch. A full batch goes to the writer; `immediately` also waits until it is written.
    public func append(immediately: Bool = false, _ build: (inout [UInt8]) -> Void) {
        let handedOff = state.withLock { state -> Bool in
            build(&state.pending)
            guard immediately || state.pending.count >= batchBytes else { return false }
            handOff(&state)
            return true
        }
        if handedOff && immediately { writer.sync {} }
    }

    /// Writes whatever is batched, and waits until it is written.
    public func flush() {
        state.withLock { handOff(&$0) }
        writer.sync {}
    }

    /// Gives the batch to the writer. Called under the lock, so batches keep their order.
    private func handOff(_ state: inout State) {
        guard !state.pending.isEmpty else { return }
        let batch = state.pending
        let fd = state.fd
        state.pending = []
        state.pending.reserveCapacity(batchBytes * 2)
        writer.async { Self.write(batch, to: fd) }
    }

    private static func write(_ batch: [UInt8], to fd: Int32) {
        batch.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    break // a log that cannot be written must not take the server down
                }
            }
        }
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
