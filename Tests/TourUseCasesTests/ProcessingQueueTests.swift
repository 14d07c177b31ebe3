import Synchronization
import Testing
@testable import NTTourUseCases

/// A daemon's processing queue: one panorama at a time, each listed once, at most its limit
/// waiting (one past it is the sweep's).
@Suite struct ProcessingQueueTests {
    @Test func aPanoramaIsListedOnceAndNoneBeyondTheLimit() async {
        let queue = ProcessingQueue(limit: 2)
        #expect(queue.admit("1/a/x") && !queue.admit("1/a/x"))
        #expect(queue.admit("1/b/y") && !queue.admit("1/c/z"))
        #expect(queue.metrics.contains("toursd_panoramas_processing 2"))
        await queue.inTurn("1/a/x") {}
        // Its turn over, it is no longer listed: there is room again, and it may come again.
        #expect(queue.admit("1/c/z") && queue.admit("1/a/x") == false)
        await queue.inTurn("1/b/y") {}
        #expect(queue.admit("1/a/x"))
    }

    @Test func oneIsProcessedAtATime() async {
        let queue = ProcessingQueue(limit: 8)
        final class Overlap: Sendable {
            let running = Mutex(0), most = Mutex(0)
        }
        let overlap = Overlap()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<6 {
                let key = "1/\(index)/x"
                #expect(queue.admit(key))
                group.addTask {
                    await queue.inTurn(key) {
                        let now = overlap.running.withLock { $0 += 1; return $0 }
                        overlap.most.withLock { $0 = max($0, now) }
                        await Task.yield()
                        overlap.running.withLock { $0 -= 1 }
                    }
                }
            }
        }
        #expect(overlap.most.withLock { $0 } == 1 && queue.metrics.contains("toursd_panoramas_processing 0"))
    }
}
