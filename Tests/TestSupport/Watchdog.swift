#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Kills a process that outlives its time. A process already reaped is never signalled
/// (`ChildProcess.signal`), so its pid, perhaps another's by then, is left alone. (Unchecked:
/// `DispatchWorkItem` is thread-safe but not marked `Sendable`.)
public final class Watchdog: @unchecked Sendable {
    private let item: DispatchWorkItem

    public init(_ process: ChildProcess, seconds: Double) {
        item = DispatchWorkItem { process.signal(SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: item)
    }

    public func cancel() { item.cancel() }
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
