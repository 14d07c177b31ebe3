#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One draining process per storage directory: an exclusive `flock` on `queue.lock`, held
/// from `start()` to `stop()`. Two processes resuming the same queue would each put the
/// other's transfers back to pending and send them twice at once. The kernel drops the lock
/// when its process dies, so a killed client never leaves it behind. Held elsewhere: `busy`.
final class QueueLock {
    private let fd: Int32

    init(directory: URL) throws(NoughtyToursError) {
        let path = directory.appendingPathComponent("queue.lock").path
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .storageUnavailable(reason: "cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            // Not closed here: the throw runs deinit, which closes `fd`. A second close would
            // close whatever the host had opened under that number meanwhile (its database).
            let failure = errno
            if failure == EWOULDBLOCK { throw .busy("another process is syncing \(directory.path)") }
            throw .storageUnavailable(reason: String(cString: strerror(failure)))
        }
    }

    deinit { if fd >= 0 { close(fd) } } // releases the lock
}
