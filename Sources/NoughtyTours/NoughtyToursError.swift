/// Every error the library throws (CLIENT.md "Errors"). `isRetryable` says whether the same
/// call could succeed on a second attempt; it is not a cue to retry uploads, which the queue
/// does on its own.
public enum NoughtyToursError: Error, Sendable, Equatable {
    /// The storage directory cannot be created, opened or written.
    case storageUnavailable(reason: String)
    case notFound
    case invalidInput(String)
    /// `.continueScan` on a floor without a plan and a saved world map.
    case notContinuable
    /// The server could not be reached, or the connection failed mid-transfer.
    case transport(String)
    /// The server answered with an error (API.md's error body).
    case server(status: Int, code: String, message: String)
    /// The shot was blocked before recording (very low light).
    case captureBlocked(reason: String)

    public var isRetryable: Bool {
        switch self {
        case .transport:
            return true
        case .server(let status, _, _):
            return [408, 429, 500, 503, 507].contains(status)
        case .storageUnavailable, .notFound, .invalidInput, .notContinuable, .captureBlocked:
            return false
        }
    }
}
