import NTAPIModel

/// Why a request to the sync service failed, as a value: a code of docs/api.md's error table and a
/// message for the person reading it. It knows no HTTP: `ServiceError+HTTP.swift` is the one
/// place these become HTTP answers.
public struct ServiceError: Error, Sendable, Equatable {
    public enum Code: String, Sendable, CaseIterable {
        case badRequest = "bad_request"
        case digestMismatch = "digest_mismatch"
        case unauthorized
        /// A grant past its lifetime (401): its holder asks for a fresh one and tries again.
        case grantExpired = "grant_expired"
        case forbidden
        case notFound = "not_found"
        /// None of the formats a request's `Accept` takes is served (406).
        case notAcceptable = "not_acceptable"
        case conflict
        case notContinuable = "not_continuable"
        case payloadTooLarge = "payload_too_large"
        case unsupportedMediaType = "unsupported_media_type"
        case rangeNotSatisfiable = "range_not_satisfiable"
        case preconditionFailed = "precondition_failed"
        case offsetMismatch = "offset_mismatch"
        case checksumMismatch = "checksum_mismatch"
        case tooManyRequests = "too_many_requests"
        case unavailable
        case insufficientStorage = "insufficient_storage"
        case `internal`
    }

    public let code: Code
    public let message: String
    /// When asking again can work (`Retry-After`, RFC 9110 §10.2.3), for `tooManyRequests`.
    public var retryAfterSeconds: Int?

    public init(_ code: Code, _ message: String, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    public static func badRequest(_ message: String) -> ServiceError { ServiceError(.badRequest, message) }
    public static func notFound(_ what: String, _ id: String) -> ServiceError { ServiceError(.notFound, "no \(what) \(id)") }
    public static func conflict(_ message: String) -> ServiceError { ServiceError(.conflict, message) }

    /// The server could not do it (its disk, its database): trying again may work. Every
    /// other code refuses the request for what it asks, and asking again changes nothing.
    package var isServerFailure: Bool { code == .internal || code == .insufficientStorage || code == .unavailable }
}

extension ServiceError {
    /// A request body or field the API model refused: a 400 with its message.
    package static func parsing<T>(_ body: () throws(InvalidDocument) -> T) throws(ServiceError) -> T {
        do {
            return try body()
        } catch {
            throw .badRequest(error.message)
        }
    }
}

/// The tus version served (tus.io/protocols/resumable-upload): a 412 (`preconditionFailed`)
/// names it in `Tus-Version`.
package enum TusProtocol {
    package static let version = "1.0.0"
}
