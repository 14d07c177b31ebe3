import NTAPIModel
import NTHTTPCore
import NTLogging
import Synchronization
import NTPostgresDB
import NTSQLiteDB

/// The tenant a request's bearer token belongs to, set by `Authentication`.
enum Tenant: RequestAttribute {
    typealias Value = Int64
}

extension Request {
    /// A paged list's `?limit=N&after=CURSOR` (docs/api.md: limit 1 to 200, 50 by default; the cursor
    /// an id of the list).
    func pageQuery() throws -> (limit: Int, after: String?) {
        (try pageLimit(), try queryParameter("after").map { text throws(ServiceError) in try Identifier.checked(text, "after") })
    }

    /// A paged list's `?limit=N`.
    func pageLimit() throws -> Int {
        guard let text = try queryParameter("limit") else { return 50 }
        guard let value = Int(text), (1...200).contains(value) else { throw ServiceError.badRequest("limit must be 1 to 200") }
        return value
    }
}

extension Request {
    /// The authenticated tenant. Only routes behind `Authentication` ask.
    var tenant: Int64 {
        guard let tenant = attributes[Tenant.self] else { preconditionFailure("\(path) is not behind Authentication") }
        return tenant
    }
}

/// Every `/v1` route: the bearer token's tenant, or 401 before any body is read. A grant's
/// token (`ntg_`) is looked up on every request and its grant attached (`HeldGrant`), for the
/// route's `Authorization` to apply. A GET with a tenant token this daemon knows goes on at
/// once, its token's check (one statement) asked just before the route's reads (on PostgreSQL
/// in the same batch as the first) and awaited before the answer leaves: a revoked token gets
/// 401 whatever the route found. A GET writes nothing.
struct Authentication: Middleware {
    let context: ServiceContext

    func respond(to request: Request, next: RequestResponder) async throws -> Response {
        var request = request
        let token = try context.bearerToken(request)
        if token.hasPrefix(GrantStore.tokenPrefix) {
            let grant = try await context.grant(token)
            request.attributes[Tenant.self] = grant.tenant
            request.attributes[HeldGrant.self] = grant
            return try await next(request)
        }
        guard request.method == .get, let (digest, tenant) = try context.knownTenant(request) else {
            request.attributes[Tenant.self] = try await context.authenticate(request)
            return try await next(request)
        }
        request.attributes[Tenant.self] = tenant
        let check = context.tokenCheck(digest)
        let response: Response
        do {
            response = try await next(request)
        } catch {
            guard try await context.stillValid(check, digest, tenant: tenant) else { throw ServiceError(.unauthorized, "unknown or revoked token") }
            throw error
        }
        guard try await context.stillValid(check, digest, tenant: tenant) else { throw ServiceError(.unauthorized, "unknown or revoked token") }
        return response
    }
}

/// Every tus request but OPTIONS: `Tus-Resumable` must name the version served (412). A
/// request of the IETF draft on the same resources (`DraftUploads.speaksDraft`) goes on.
struct TusVersionCheck: Middleware {
    func respond(to request: Request, next: RequestResponder) async throws -> Response {
        if DraftUploads.speaksDraft(request.headers) { return try await next(request) }
        try TusHeaders.checkResumable(request.headers["tus-resumable"])
        return try await next(request)
    }
}

/// The service's errors on their way out: a storage failure of any backend becomes the
/// service's answer for its kind, internal errors are logged with the request id, and storage
/// that cannot be reached is noted for the outage's log (`OutageLog`), never logged per request.
/// (`ServiceError.httpError` says how each is answered; any other error is a 500 the server logs.)
struct ServiceErrors: Middleware {
    let logger: Logger
    /// The `Retry-After` of storage that cannot be reached, unless it says better.
    let retryAfterSeconds: Int
    let outages: OutageLog

    init(_ context: ServiceContext) {
        logger = context.logger
        retryAfterSeconds = context.config.retryAfterSeconds
        outages = context.outages
    }

    func respond(to request: Request, next: RequestResponder) async throws -> Response {
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

extension Response {
    /// An answer whose body is one of the API's documents.
    static func document(_ status: HTTPStatus, _ document: some JSONDocument) -> Response {
        .json(status, document.jsonBytes)
    }
}

extension ServiceError {
    /// A storage failure as the service answers it: unreachable or busy is 503 with
    /// `Retry-After` (the daemon reconnects by itself), no room 507, anything else 500.
    init(storage error: StorageError, retryAfterSeconds: Int) {
        switch error.kind {
        case .unavailable: self.init(.unavailable, error.message, retryAfterSeconds: error.retryAfterSeconds ?? retryAfterSeconds)
        case .full: self.init(.insufficientStorage, error.message)
        case .corrupt, .failed: self.init(.internal, error.message)
        }
    }
}
