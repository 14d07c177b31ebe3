import NTHTTPCore
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// The one place a `ServiceError` becomes HTTP.
extension ServiceError: HTTPErrorConvertible {
    /// The status and headers of each code (docs/api.md "Errors").
    public var httpError: HTTPError {
        switch code {
        case .badRequest, .digestMismatch: return HTTPError(.badRequest, code: code.rawValue, message)
        case .unauthorized:
            return HTTPError(.unauthorized, code: code.rawValue, message,
                             headers: [HTTPField(name: "WWW-Authenticate", value: "Bearer realm=\"toursd\"")])
        case .grantExpired:
            return HTTPError(.unauthorized, code: code.rawValue, message,
                             headers: [HTTPField(name: "WWW-Authenticate", value: "Bearer realm=\"toursd\", error=\"invalid_token\", error_description=\"the grant expired\"")])
        case .forbidden: return HTTPError(.forbidden, code: code.rawValue, message)
        case .notFound: return HTTPError(.notFound, code: code.rawValue, message)
        case .notAcceptable: return HTTPError(.notAcceptable, code: code.rawValue, message)
        case .conflict, .notContinuable, .offsetMismatch: return HTTPError(.conflict, code: code.rawValue, message)
        case .preconditionFailed:
            return HTTPError(.preconditionFailed, code: code.rawValue, message, headers: [HTTPField(name: "Tus-Version", value: TusProtocol.version)])
        case .checksumMismatch: return HTTPError(.checksumMismatch, code: code.rawValue, message)
        case .payloadTooLarge: return HTTPError(.contentTooLarge, code: code.rawValue, message)
        case .unsupportedMediaType: return HTTPError(.unsupportedMediaType, code: code.rawValue, message)
        case .rangeNotSatisfiable: return HTTPError(.rangeNotSatisfiable, code: code.rawValue, message)
        case .tooManyRequests:
            return HTTPError(.tooManyRequests, code: code.rawValue, message,
                             headers: [HTTPField(name: "Retry-After", value: String(retryAfterSeconds ?? 1))])
        case .unavailable:
            return HTTPError(.serviceUnavailable, code: code.rawValue, message,
                             headers: [HTTPField(name: "Retry-After", value: String(retryAfterSeconds ?? 1))])
        case .insufficientStorage: return HTTPError(.insufficientStorage, code: code.rawValue, message)
        case .internal: return HTTPError(.internalServerError, code: code.rawValue, message)
        }
    }
}
