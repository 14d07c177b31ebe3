import Synchronization

/// The memory all image work of a process may hold at once (`imageMemoryBytes`): previews and
/// tiles, of any format, take their share before decoding, from what the image's headers say it
/// needs, and give it back once their buffers are freed. Work that does not fit waits (any that
/// fits goes first: a small preview is not held behind a large tiling); work larger than the
/// whole is refused at once.
public final class ImageMemory: Sendable {
    public let limit: Int

    private struct Waiting {
        let bytes: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var used = 0
        var peak = 0
        var waiting: [Waiting] = []

        /// Grants what fits, in the order asked; returns the waits to resume.
        mutating func grant(limit: Int) -> [CheckedContinuation<Void, Never>] {
            var granted: [CheckedContinuation<Void, Never>] = []
            waiting.removeAll { wait in
                guard used + wait.bytes <= limit else { return false }
                used += wait.bytes
                granted.append(wait.continuation)
                return true
            }
            peak = max(peak, used)
            return granted
        }
    }

    private let state = Mutex(State())

    public init(limit: Int) {
        self.limit = limit
    }

    /// Bytes held now, and the most held at once since start (`/metrics`).
    public var inUse: Int { state.withLock { $0.used } }
    public var peak: Int { state.withLock { $0.peak } }

    /// `body` with `bytes` of the budget held, waiting for them if need be; refused when the
    /// budget could never hold them.
    public func holding<T>(_ bytes: Int, for what: String, _ body: () async throws -> T) async throws -> T {
        guard bytes <= limit else {
            throw PreviewError("\(what) would take \(bytes >> 20) MiB, more than the \(limit >> 20) MiB all image work may (imageMemoryBytes)")
        }
        await take(max(0, bytes))
        defer { give(max(0, bytes)) }
        return try await body()
    }

    private func take(_ bytes: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                state.waiting.append(Waiting(bytes: bytes, continuation: continuation))
                return state.grant(limit: limit)
            }
            for waiter in granted { waiter.resume() }
        }
    }

    private func give(_ bytes: Int) {
        let granted = state.withLock { state in
            state.used -= bytes
            return state.grant(limit: limit)
        }
        for waiter in granted { waiter.resume() }
    }
}
