/// Why a bucket operation failed, as its callers must tell apart: the store away (answer 503
/// and try again later), a key or upload that is not there, a condition not met, or a refusal
/// that trying again will not change.
public enum ObjectStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No answer (connection refused, timed out), or a 5xx: the store is away for now.
    case unavailable(String)
    /// 404: no such key, or no such multipart upload.
    case notFound(String)
    /// 412: `If-None-Match: *` found an object there.
    case preconditionFailed(String)
    /// Any other refusal: its status, S3's error code and message.
    case refused(status: Int, code: String, message: String)

    public var description: String {
        switch self {
        case .unavailable(let message): "the object store is unavailable: \(message)"
        case .notFound(let message): message
        case .preconditionFailed(let message): message
        case .refused(let status, let code, let message): "the object store refused (\(status) \(code)): \(message)"
        }
    }

    /// Why the store cannot be used for now, where trying again later may change it: no
    /// answer or a 5xx, or our credentials refused (401, 403: a key rotated or revoked, a
    /// policy changed, a clock skewed); nil for a refusal of this one call.
    public var awayReason: String? {
        switch self {
        case .unavailable(let reason): reason
        case .refused(let status, let code, let message) where status == 401 || status == 403:
            "the object store refuses toursd's credentials (\(status) \(code)): \(message)"
        default: nil
        }
    }

    /// The error an answer of `status` with S3's `<Error>` document (if any) means.
    static func answer(_ status: Int, _ body: [UInt8], what: String) -> ObjectStoreError {
        let error = S3Answers.error(body)
        let detail = error.map { "\(what): \($0.code) \($0.message)" } ?? "\(what): HTTP \(status)"
        switch status {
        case 404: return .notFound(detail)
        case 412: return .preconditionFailed(detail)
        // SlowDown comes as 503, some stores throttle with 429: both mean later.
        case 429, 500...599: return .unavailable(detail)
        default: return .refused(status: status, code: error?.code ?? "", message: error?.message ?? "HTTP \(status)")
        }
    }
}

extension ObjectStoreError {
    /// How /metrics counts a call that ended in it.
    var outcome: String {
        switch self {
        case .unavailable: "unavailable"
        case .notFound: "not_found"
        case .preconditionFailed: "precondition_failed"
        case .refused: "refused"
        }
    }
}
