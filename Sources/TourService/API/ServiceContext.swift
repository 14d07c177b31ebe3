import Dispatch
import Foundation
import HTTPCore
import Logging
import SQLiteDB

/// What every route of the service shares: storage, files, limits, the log.
final class ServiceContext: Sendable {
    let pool: DatabasePool
    let blobs: BlobStore
    let config: ToursdConfig
    let logger: Logger
    /// Where database work and fsyncs run: never on an event loop, which serves many sockets.
    private let work = DispatchQueue(label: "toursd.work", attributes: .concurrent, target: .global())

    init(pool: DatabasePool, blobs: BlobStore, config: ToursdConfig, logger: Logger) {
        self.pool = pool
        self.blobs = blobs
        self.config = config
        self.logger = logger
    }

    /// The tenant of the request's bearer token (API.md "Tenants are isolated").
    func authenticate(_ request: Request) throws(ServiceError) -> Int64 {
        guard let header = request.headers["authorization"] else { throw ServiceError(.unauthorized, "a bearer token is required") }
        let parts = header.split(separator: " ", maxSplits: 1)
        // The scheme is case-insensitive (RFC 9110 §11.1).
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw ServiceError(.unauthorized, "Authorization must be \"Bearer <token>\"")
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        let tenant: Int64?
        do {
            tenant = try pool.read { try TenantStore.tenant(forToken: token, $0) }
        } catch {
            throw ServiceError(.internal, "token lookup failed")
        }
        guard let tenant else { throw ServiceError(.unauthorized, "unknown or revoked token") }
        return tenant
    }

    /// Runs `body` off the event loop and answers with its response, or its error as JSON.
    func respond(_ request: Request, _ responder: Responder, _ body: @escaping @Sendable () throws -> Response) {
        work.async { [self] in
            responder.send(answer(request, body))
        }
    }

    /// The response of `body`, or the error it threw as API.md's JSON error: the one place
    /// storage and service errors become HTTP.
    func answer(_ request: Request, _ body: () throws -> Response) -> Response {
        do {
            return try body()
        } catch let error as ServiceError {
            if error.code == .internal { logger.error("request failed", ["id": request.id.description, "error": error.message]) }
            return .error(error.httpError)
        } catch let error as SQLiteError where error.isDiskFull {
            return .error(ServiceError(.insufficientStorage, "the server's disk is full").httpError)
        } catch {
            logger.error("request failed", ["id": request.id.description, "error": "\(error)"])
            return .error(.internalError("internal error; request id \(request.id)"))
        }
    }

    /// Writes in a transaction of its own on the single writer, group-committed: durable
    /// when this returns.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.write(body)
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.read(body)
    }
}

/// Builds the service's request handlers: authenticate on the loop (one indexed read, so a
/// 401 goes out before any body is read), then do the work off it.
struct Endpoints {
    let context: ServiceContext

    /// A route without a request body.
    func plain(_ work: @escaping @Sendable (Request, Int64) throws -> Response) -> any RequestHandler {
        ClosureHandler { [context] request, responder in
            let tenant: Int64
            do throws(ServiceError) { tenant = try context.authenticate(request) } catch { return .response(.error(error.httpError)) }
            context.respond(request, responder) { try work(request, tenant) }
            return .deferred
        }
    }

    /// A route whose body is JSON, collected up to the route's limit. `typed`: a Content-Type
    /// other than JSON is refused with 415 (API.md asks it of plans).
    func json(typed: Bool = false, _ work: @escaping @Sendable (Request, Int64, [UInt8]) throws -> Response) -> any RequestHandler {
        ClosureHandler { [context] request, responder in
            let tenant: Int64
            do throws(ServiceError) {
                tenant = try context.authenticate(request)
                if typed { try Self.requireJSON(request) }
            } catch {
                return .response(.error(error.httpError))
            }
            let sink = CollectedBody { bytes in
                context.respond(request, responder) { try work(request, tenant, bytes) }
            }
            return .readBody(sink, limit: request.bodyLimit)
        }
    }

    /// A route whose body is a file to store. `prepare` runs first, on the loop: it checks the
    /// request and either answers at once (the body unread) or names what to do with the body.
    func upload(_ prepare: @escaping @Sendable (Request, Int64) throws -> UploadPlan) -> any RequestHandler {
        ClosureHandler { [context] request, responder in
            let plan: UploadPlan
            let incoming: IncomingBlob
            do {
                let tenant = try context.authenticate(request)
                plan = try prepare(request, tenant)
                if case .answer(let response) = plan { return .response(response) }
                incoming = try context.blobs.makeIncoming()
            } catch let error as ServiceError {
                return .response(.error(error.httpError))
            } catch {
                return .response(context.answer(request) { throw error })
            }
            guard case .store(let finish) = plan else { preconditionFailure("answered above") }
            let sink = UploadBody(incoming: incoming) { blob in
                context.respond(request, responder) {
                    // Whatever the answer, no temporary file outlives it.
                    defer { blob.discard() }
                    return try finish(blob)
                }
            }
            return .readBody(sink, limit: request.bodyLimit)
        }
    }

    /// Content-Type must say JSON when it is given (415 otherwise).
    static func requireJSON(_ request: Request) throws(ServiceError) {
        guard let type = request.headers["content-type"] else { return }
        let media = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard media == "application/json" || media.hasSuffix("+json") else {
            throw ServiceError(.unsupportedMediaType, "the body must be application/json, not \"\(media.prefix(100))\"")
        }
    }
}

/// What an upload route does with a request.
enum UploadPlan: Sendable {
    /// Answer without reading the body (a re-send already stored, a conflict).
    case answer(Response)
    /// Receive the body into a temporary file, then finish with it (off the loop).
    case store(@Sendable (IncomingBlob) throws -> Response)
}

/// Collects a small body (JSON) in memory; the route's limit bounds it.
final class CollectedBody: BodySink {
    private var bytes: [UInt8] = []
    private let done: ([UInt8]) -> Void

    init(_ done: @escaping ([UInt8]) -> Void) { self.done = done }

    func receive(_ chunk: UnsafeRawBufferPointer) throws(HTTPError) { bytes.append(contentsOf: chunk) }

    func finish(responder: Responder) -> Response? {
        done(bytes)
        return nil
    }

    func abort() {}
}

/// Streams a body into a temporary file as it arrives: written and hashed once, never held
/// in memory. The file goes when the sink does unless it was committed.
final class UploadBody: BodySink {
    private var incoming: IncomingBlob?
    private let done: (IncomingBlob) -> Void

    init(incoming: IncomingBlob, _ done: @escaping (IncomingBlob) -> Void) {
        self.incoming = incoming
        self.done = done
    }

    func receive(_ chunk: UnsafeRawBufferPointer) throws(HTTPError) {
        do throws(ServiceError) {
            try incoming?.write(chunk)
        } catch {
            incoming = nil
            throw error.httpError
        }
    }

    func finish(responder: Responder) -> Response? {
        if let incoming { done(incoming) }
        incoming = nil
        return nil
    }

    func abort() { incoming = nil }
}
