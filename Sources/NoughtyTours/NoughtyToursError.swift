import Foundation

/// Every error the library throws (docs/client.md "Errors"). `isRetryable` says whether the same
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
    /// The server answered with an error (docs/api.md's error body).
    case server(status: Int, code: String, message: String)
    /// The shot was blocked before recording (very low light).
    case captureBlocked(reason: String)
    /// Another process holds the storage directory's upload queue.
    case busy(String)

    public var isRetryable: Bool {
        switch self {
        case .transport, .busy:
            return true
        case .server(let status, _, _):
            return [408, 429, 500, 503, 507].contains(status)
        case .storageUnavailable, .notFound, .invalidInput, .notContinuable, .captureBlocked:
            return false
        }
    }
}

extension NoughtyToursError: CustomStringConvertible {
    /// What went wrong, in words a host can show as they are.
    public var description: String {
        switch self {
        case .storageUnavailable(let reason): return "local storage unavailable: \(reason)"
        case .notFound: return "not found"
        case .invalidInput(let text): return text
        case .notContinuable: return "this floor cannot be continued: it needs a plan and a saved world map"
        case .transport(let reason): return "cannot reach the server: \(reason)"
        case .server(let status, let code, let message): return "the server answered \(status) \(code): \(message)"
        case .captureBlocked(let reason): return reason
        case .busy(let reason): return reason
        }
    }
}

/// An error as the queue keeps it in local storage (`queue_items.last_error`): JSON with a
/// case and its values, read back as the same error after a restart. Pure.
enum StoredError {
    static func encode(_ error: NoughtyToursError) -> String {
        var object: [String: Any]
        switch error {
        case .storageUnavailable(let reason): object = ["case": "storageUnavailable", "reason": reason]
        case .notFound: object = ["case": "notFound"]
        case .invalidInput(let text): object = ["case": "invalidInput", "reason": text]
        case .notContinuable: object = ["case": "notContinuable"]
        case .transport(let reason): object = ["case": "transport", "reason": reason]
        case .server(let status, let code, let message): object = ["case": "server", "status": status, "code": code, "message": message]
        case .captureBlocked(let reason): object = ["case": "captureBlocked", "reason": reason]
        case .busy(let reason): object = ["case": "busy", "reason": reason]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The stored error; text written before errors were kept this way reads as a transport
    /// failure carrying that text.
    static func decode(_ text: String) -> NoughtyToursError {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              let name = object["case"] as? String else { return .transport(text) }
        let reason = object["reason"] as? String ?? ""
        switch name {
        case "storageUnavailable": return .storageUnavailable(reason: reason)
        case "notFound": return .notFound
        case "invalidInput": return .invalidInput(reason)
        case "notContinuable": return .notContinuable
        case "server":
            return .server(status: object["status"] as? Int ?? 0, code: object["code"] as? String ?? "", message: object["message"] as? String ?? "")
        case "captureBlocked": return .captureBlocked(reason: reason)
        case "busy": return .busy(reason)
        default: return .transport(reason)
        }
    }
}
