import Foundation

extension Thread {
    /// Runs `body` on a thread of its own (blocking socket calls stay off Swift's pool); the
    /// task ends when it does.
    public static func detachedTask(_ body: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                Thread.detachNewThread {
                    body()
                    done.resume()
                }
            }
        }
    }
}
