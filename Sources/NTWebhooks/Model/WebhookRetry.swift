import NTServiceModel

/// What an endpoint does after an attempt: delivered (on to the next event), tried again later
/// (exponential backoff with jitter), or, failing for `webhookRetryHours`, disabled. Pure.
enum WebhookRetry {
    enum State: Equatable, Sendable {
        case delivered
        /// `attempts` failed in a row since `failingSince` (Unix s); the next at `at` (Unix ms).
        case retry(attempts: Int, failingSince: Int64, at: Int64)
        case disabled(attempts: Int, failingSince: Int64)
    }

    struct Policy: Equatable, Sendable {
        var retryHours: Int
        var baseMs: Int
        var maxMs: Int
    }

    /// After an attempt at `nowMs` that succeeded (`delivered`) or not, with `attempts` failed
    /// before it since `failingSince`. `jitter` (0 up to 1) takes up to half off the delay, so
    /// that endpoints that failed together do not all come back at once.
    static func next(delivered: Bool, attempts: Int, failingSince: Int64?, nowMs: Int64, policy: Policy, jitter: Double) -> State {
        guard !delivered else { return .delivered }
        let failed = attempts + 1
        let since = failingSince ?? nowMs / 1000
        if nowMs / 1000 - since >= Int64(policy.retryHours) * 3600 { return .disabled(attempts: failed, failingSince: since) }
        return .retry(attempts: failed, failingSince: since, at: nowMs + delayMs(failed: failed, policy: policy, jitter: jitter))
    }

    /// The base doubled for each failure after the first, at most the maximum, less up to half.
    static func delayMs(failed: Int, policy: Policy, jitter: Double) -> Int64 {
        let doublings = min(max(failed - 1, 0), 40)
        let full = min(Int64(policy.maxMs), Int64(policy.baseMs) << doublings)
        return full - Int64(Double(full / 2) * min(max(jitter, 0), 1))
    }
}
