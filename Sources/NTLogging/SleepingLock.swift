#if canImport(Glibc)
import Glibc
#endif

/// State behind a pthread mutex, for locks many threads take on every request. A waiter
/// sleeps in the kernel at once, where `Synchronization.Mutex` first spins: with more busy
/// threads than cores, the holder may be off its core and the spinning only takes that core
/// from it (measured: 8 % of toursd's time spent spinning on the access log's lock).
public final class SleepingLock<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state: State

    public init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
