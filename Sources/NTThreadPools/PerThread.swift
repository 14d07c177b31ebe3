/// One value for each thread of a pool (`ThreadPool.run` tells a job its thread's index), made
/// by that thread on first use and touched by it alone: a libcurl handle each, whose
/// connections outlive the jobs that use them.
public final class PerThread<Value>: @unchecked Sendable {
    /// A box per thread, all made up front: a thread writes its own box, never the array.
    private final class Slot {
        var value: Value?
    }

    private let slots: [Slot]

    public init(threads: Int) {
        slots = (0..<threads).map { _ in Slot() }
    }

    /// The value of `thread`, which must be the calling thread's index; made by `make` the
    /// first time (and again after `make` failed).
    public func value<Failure: Error>(_ thread: Int, orMake make: () throws(Failure) -> Value) throws(Failure) -> Value {
        if let value = slots[thread].value { return value }
        let value = try make()
        slots[thread].value = value
        return value
    }
}
