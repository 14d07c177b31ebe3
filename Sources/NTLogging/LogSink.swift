#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import NTThreadPools
import Synchronization

/// Where log lines go: a file descriptor (stderr by default), written in batches so that a
/// busy server makes one write per batch instead of one per request. Lines are appended under
/// a lock; a full batch is handed, in order, to a writer queue, so no event loop waits for the
/// log file. `flush()` (a timer calls it) and lines that must not wait are written at once.
public final class LogSink: Sendable {
    private struct State {
        var fd: Int32
        var pending: [UInt8]
        /// Whether the sink opened `fd` itself (and so closes it when it reopens).
        var ownsFD = false
    }

    private let state: SleepingLock<State>
    private let batchBytes: Int
    private let writer = DispatchQueue(label: "log.writer")

    public init(fd: Int32 = STDERR_FILENO, batchBytes: Int = 32 * 1024) {
        var pending = [UInt8]()
        pending.reserveCapacity(batchBytes * 2)
        self.state = SleepingLock(State(fd: fd, pending: pending))
        self.batchBytes = batchBytes
    }

    /// Appends one line, built in place by `build` (which must end it with a newline), to the
    /// batch. A full batch goes to the writer; `immediately` also waits until it is written,
    /// except on an event loop's thread, which never waits on a file (the line goes at once all
    /// the same).
    public func append(immediately: Bool = false, _ build: (inout [UInt8]) -> Void) {
        // Built outside the lock: many threads log at once, and the lock is held only to copy.
        var line = [UInt8]()
        line.reserveCapacity(256)
        build(&line)
        let handedOff = state.withLock { state -> Bool in
            state.pending.append(contentsOf: line)
            guard immediately || state.pending.count >= batchBytes else { return false }
            handOff(&state)
            return true
        }
        if handedOff && immediately && EventLoopThread.current == nil { writer.sync {} }
    }

    /// A sink appending to the file at `path` (created 0640 when missing).
    public convenience init(path: String, batchBytes: Int = 32 * 1024) throws(LogFileError) {
        self.init(fd: try Self.open(path), batchBytes: batchBytes)
        state.withLock { $0.ownsFD = true }
    }

    /// Reopens the log at `path` (after a rotation moved the old file away): what was batched
    /// goes to the old file first, then lines go to the new one.
    public func reopen(path: String) throws(LogFileError) {
        let fd = try Self.open(path)
        let old = state.withLock { state -> (fd: Int32, owned: Bool) in
            handOff(&state)
            defer { (state.fd, state.ownsFD) = (fd, true) }
            return (state.fd, state.ownsFD)
        }
        writer.sync {}
        if old.owned { close(old.fd) }
    }

    private static func open(_ path: String) throws(LogFileError) -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw LogFileError(path: path, reason: String(cString: strerror(errno))) }
        return fd
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

/// A log file that cannot be opened.
public struct LogFileError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot open the log file \(path): \(reason)" }
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
