/// What happens to a queue item after an attempt: pure, so tests call it directly.
struct RetryPolicy: Sendable {
    /// The seed's promise: each item is attempted at most three times on its own.
    static let maxAttempts = 3

    var initial: Duration
    var max: Duration
    var jitter: Double

    init(_ options: SyncOptions) {
        initial = options.initialBackoff
        max = options.maxBackoff
        jitter = options.jitter
    }

    enum Decision: Equatable {
        case retry(after: Duration)
        case fail
    }

    /// After attempt number `attempt` (1-based) failed with `error`: a non-retryable answer
    /// fails at once, the third failure fails, anything else waits and tries again.
    /// `random` is in 0..<1; `retryAfter` is the server's own wish, honoured up to `max`.
    func decide(_ error: NoughtyToursError, attempt: Int, retryAfter: Duration? = nil, random: Double) -> Decision {
        guard error.isRetryable, attempt < Self.maxAttempts else { return .fail }
        let wait = delay(afterAttempt: attempt, random: random)
        guard let retryAfter else { return .retry(after: wait) }
        return .retry(after: Swift.max(wait, Swift.min(retryAfter, max)))
    }

    /// Exponential backoff with jitter: `initial · 2^(attempt−1)`, capped at `max`, of which
    /// the `jitter` share is drawn at random.
    func delay(afterAttempt attempt: Int, random: Double) -> Duration {
        let doubled = initial * (1 << Swift.min(Swift.max(attempt - 1, 0), 30))
        let base = Swift.min(doubled, max)
        return base * (1 - jitter) + base * (jitter * random)
    }
}
