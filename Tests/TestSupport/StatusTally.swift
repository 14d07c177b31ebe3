import Foundation

/// The statuses of requests several client threads sent, and the slowest answer's time.
public final class StatusTally: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [Int] = []
    private var longest: Duration = .zero

    public init() {}

    public func add(_ status: Int, took: Duration = .zero) {
        lock.withLock {
            collected.append(status)
            longest = max(longest, took)
        }
    }

    public var statuses: [Int] { lock.withLock { collected } }
    public var slowest: Duration { lock.withLock { longest } }
}
