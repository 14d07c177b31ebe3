#if canImport(Glibc)
import Glibc
#endif

/// A mark a thread carries for the rest of its life, in a thread-specific slot of its own: what
/// kind of thread it is (a pool's, an event loop's), asked by the code that runs on it.
final class ThreadMark<Mark: AnyObject>: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        self.key = key
    }

    /// Marks the calling thread with `mark` (kept alive for the thread's life).
    func adopt(_ mark: Mark) {
        pthread_setspecific(key, Unmanaged.passRetained(mark).toOpaque())
    }

    /// The calling thread's mark, if it adopted one.
    var current: Mark? {
        pthread_getspecific(key).map { Unmanaged<Mark>.fromOpaque($0).takeUnretainedValue() }
    }
}
