#if canImport(Glibc)
import Glibc
#endif
import CNTLinux
import Foundation
import Synchronization

/// A program a test starts: stdin /dev/null (or a file), stdout and stderr each discarded,
/// inherited, a pipe the test reads or a file, and no other descriptor of the test process.
///
/// posix_spawn, not Foundation's `Process`: to close the parent's descriptors, `Process.run`
/// of this toolchain (swift-corelibs-foundation before its #5472) lists /proc/self/fd and
/// copies each entry's whole 256-byte `d_name`, reading past readdir's buffer. Now and then
/// that crashed the whole test process, and the daemons it had started, holding its output
/// open, kept `swift test` waiting until the run's time limit.
public final class ChildProcess: Sendable {
    public enum Stream: Sendable {
        case discard, inherit, pipe
        /// Written to the file at this path (created, or emptied).
        case file(String)
    }

    /// How the process ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        /// The exit status, or the signal that ended it (as the shell and `Process` say).
        public var status: Int32 {
            switch self {
            case .exited(let status), .signalled(let status): return status
            }
        }

        public var description: String {
            switch self {
            case .exited(let status): return "exited with \(status)"
            case .signalled(let signal): return "killed by signal \(signal)"
            }
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: pid_t
    /// The read end of stdout or stderr started as `.pipe`.
    public let standardOutput: FileHandle?
    public let standardError: FileHandle?
    /// Set once the process is reaped: until then its pid is its own, and may be signalled.
    private let ended = Mutex<Termination?>(nil)

    /// Starts `executable` with `arguments`; `environment` replaces the test process's when
    /// given. The child is in a process group of its own, with no signal blocked.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, workingDirectory: String? = nil,
                stdin: String? = nil, standardOutput: Stream = .discard, standardError: Stream = .discard) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        var childEnds: [Int32] = [] // closed here once the child has its copies
        defer { childEnds.forEach { _ = close($0) } }
        func direct(_ stream: Stream, to target: Int32) throws -> FileHandle? {
            switch stream {
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .inherit:
                break
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
                // Close-on-exec: only the child's dup2 passes its end on.
                for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                childEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
                return FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
            }
            return nil
        }
        let out = try direct(standardOutput, to: 1)
        let err = try direct(standardError, to: 2)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        if let workingDirectory { posix_spawn_file_actions_addchdir_np(&actions, workingDirectory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = envp.map { posix_spawn(&pid, executable, &actions, &attributes, argv + [nil], $0 + [nil]) }
            ?? posix_spawn(&pid, executable, &actions, &attributes, argv + [nil], environ)
        guard spawned == 0 else {
            throw Failure(description: "\(executable) could not be started: \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        self.standardOutput = out
        self.standardError = err
    }

    /// Reads the stderr pipe until `recognise` finds what it waits for in what arrived (a
    /// server's "listening" line), for `seconds` at most: its answer, and from then on stderr
    /// is read in the background, so the child never blocks on a full pipe. Nil when the
    /// time ran out or the child closed stderr first; `seen` is what arrived.
    public func awaitStandardError<Found>(seconds: Double, _ recognise: (String) -> Found?) -> (found: Found?, seen: String) {
        guard let stderr = standardError else { return (nil, "") }
        var seen = ""
        let deadline = Date().addingTimeInterval(seconds)
        while waitReadable(stderr.fileDescriptor, until: deadline) {
            let data = stderr.availableData
            if data.isEmpty { break } // closed: the child ended
            seen += String(decoding: data, as: UTF8.self)
            if let found = recognise(seen) {
                Thread.detachNewThread { while !stderr.availableData.isEmpty {} }
                return (found, seen)
            }
        }
        return (nil, seen)
    }

    /// How the process ended, or nil while it runs (reaped here once it ended).
    public var termination: Termination? {
        ended.withLock { ended in
            if ended == nil {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    let signal = status & 0x7f
                    ended = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
                }
            }
            return ended
        }
    }

    public var isRunning: Bool { termination == nil }

    /// Sends `number`, unless the process was reaped (its pid may be another's by now).
    public func signal(_ number: Int32) {
        ended.withLock { ended in
            if ended == nil { Glibc.kill(pid, number) }
        }
    }

    /// Ends the process at once (SIGKILL) and waits for it.
    public func kill() {
        signal(SIGKILL)
        waitUntilExit()
    }

    /// Waits for the process to end.
    @discardableResult
    public func waitUntilExit() -> Termination {
        while true {
            if let termination { return termination }
            // Blocks until it has ended, reaping nothing (`termination` reaps).
            var info = siginfo_t()
            _ = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)
        }
    }

    /// Waits up to `seconds` for the process to end; nil if it still runs.
    public func waitUntilExit(seconds: Double) -> Termination? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let termination { return termination }
            usleep(5_000)
        }
        return termination
    }
}
