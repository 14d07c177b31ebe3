import NTHTTPCore
import NTLogging
import NTServiceModel
import NTServiceStorage
import NTSQLKit
import NTTourUseCases

/// The service's errors on their way out: a storage failure of any backend becomes the
/// service's answer for its kind, internal errors are logged with the request id, and storage
/// that cannot be reached is noted for the outage's log (`OutageLog`), never logged per request.
/// (`ServiceError.httpError` says how each is answered; any other error is a 500 the server logs.)
package struct ServiceErrors: Middleware {
    package let logger: Logger
    /// The `Retry-After` of storage that cannot be reached, unless it says better.
    package let retryAfterSeconds: Int
    package let outages: OutageLog

    package init(logger: Logger, retryAfterSeconds: Int, outages: OutageLog) {
        self.logger = logger
        self.retryAfterSeconds = retryAfterSeconds
        self.outages = outages
    }

    package func respond(to request: Request, next: RequestResponder) async throws -> Response {
        do {
            return try await next(request)
        } catch let error as ServiceError {
            if error.code == .internal { logger.error("request failed", ["id": request.id.description, "error": error.message]) }
            throw error
        } catch let failure as any StorageFailure {
            let error = failure.storageError
            if error.kind == .failed || error.kind == .corrupt {
                logger.error("request failed", ["id": request.id.description, "error": error.description])
            } else if error.kind == .unavailable {
                outages.met(error)
            }
            throw ServiceError(storage: error, retryAfterSeconds: retryAfterSeconds)
        }
    }
}

extension ServiceError {
    /// A storage failure as the service answers it: unreachable or busy is 503 with
    /// `Retry-After` (the daemon reconnects by itself), no room 507, anything else 500.
    package init(storage error: StorageError, retryAfterSeconds: Int) {
        switch error.kind {
        case .unavailable: self.init(.unavailable, error.message, retryAfterSeconds: error.retryAfterSeconds ?? retryAfterSeconds)
        case .full: self.init(.insufficientStorage, error.message)
        case .corrupt, .failed: self.init(.internal, error.message)
        }
    }
}
