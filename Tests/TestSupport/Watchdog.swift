#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Kills a process that outlives its time. Cancelled once the process has exited (and it
/// looks before it kills), so it never signals a pid the system has since given to another.
public final class Watchdog: @unchecked Sendable {
    private let item: DispatchWorkItem

    public init(_ process: Process, seconds: Double) {
        item = DispatchWorkItem { [weak process] in
            guard let process, process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: item)
    }

    public func cancel() { item.cancel() }

    /// For a child spawned without `Process`: killed if still running when the time is up.
    /// It is reaped only after the watchdog is cancelled (`waitForExit`), so the pid cannot
    /// belong to another process when it is signalled.
    init(pid: pid_t, seconds: Double) {
        self.pid = pid
        item = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: item)
    }

    private var pid: pid_t = 0

    /// Waits for the child to end, cancels the watchdog, reaps the child; its exit status, or
    /// the signal that ended it (as `Process.terminationStatus` says).
    func waitForExit() -> Int32 {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        item.cancel()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }
}

/// Waits until `fd` has something to read (or its writer closed it), at most until `deadline`;
/// false when the time ran out.
public func waitReadable(_ fd: Int32, until deadline: Date) -> Bool {
    while true {
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { return false }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, Int32(min(left, 60) * 1000))
        if ready > 0 { return true }
        if ready < 0 && errno != EINTR { return true } // let the read report it
    }
}
