import Foundation
import Hashing
import HTTPCore
import Logging

/// Resumable panorama uploads: tus 1.0.0 with creation, creation-with-upload, termination,
/// checksum and expiration (API.md "Panoramas — resumable upload"). A finished upload becomes
/// the panorama exactly as a one-shot upload would.
enum UploadRoutes {
    static let resumable = [HTTPField(name: "Tus-Resumable", value: TusHeaders.version)]
    static let offsetType = "application/offset+octet-stream"

    static func add(to table: inout RouteTable, _ context: ServiceContext, _ sessions: UploadSessions) {
        let uploads = Uploads(context: context, sessions: sessions)
        let maxSize = Int64(context.config.maxPanoramaBytes)

        table.add(.options, "/v1/uploads") { request, _ in
            do throws(ServiceError) {
                _ = try context.authenticate(request)
            } catch {
                return .response(.error(error.httpError))
            }
            return .response(Response(status: .noContent, headers: [
                HTTPField(name: "Tus-Resumable", value: TusHeaders.version),
                HTTPField(name: "Tus-Version", value: TusHeaders.version),
                HTTPField(name: "Tus-Extension", value: TusHeaders.extensions),
                HTTPField(name: "Tus-Max-Size", value: String(maxSize)),
                HTTPField(name: "Tus-Checksum-Algorithm", value: TusHeaders.checksumAlgorithms),
            ]))
        }
        table.add(.post, "/v1/uploads", bodyLimit: maxSize, headers: resumable) { request, responder in
            uploads.create(request, responder)
        }
        table.add(.head, "/v1/uploads/{uploadId}", headers: resumable) { request, responder in
            uploads.head(request, responder)
        }
        table.add(.patch, "/v1/uploads/{uploadId}", bodyLimit: maxSize, headers: resumable) { request, responder in
            uploads.patch(request, responder)
        }
        table.add(.delete, "/v1/uploads/{uploadId}", headers: resumable) { request, responder in
            uploads.terminate(request, responder)
        }
    }
}

/// The work behind the tus routes.
struct Uploads: Sendable {
    let context: ServiceContext
    let sessions: UploadSessions

    private var expiry: Int64 { Int64(context.config.uploadExpirySeconds) }
    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// What every tus request must pass: the protocol version, then the token.
    private func admit(_ request: Request) throws(ServiceError) -> Int64 {
        try TusHeaders.checkResumable(request.headers["tus-resumable"])
        return try context.authenticate(request)
    }

    /// The upload named by the path, unexpired.
    private func upload(_ request: Request, _ tenant: Int64) throws -> UploadRecord {
        let id = try request.uuid("uploadId")
        guard let upload = try context.read({ try UploadStore.upload($0, tenant, id) }), upload.expiresAt > now else {
            throw ServiceError.notFound("upload", id)
        }
        return upload
    }

    private func progressHeaders(_ upload: UploadRecord, offset: Int64) -> [HTTPField] {
        var headers = [HTTPField(name: "Upload-Offset", value: String(offset))]
        if !upload.finished { headers.append(HTTPField(name: "Upload-Expires", value: HTTPDate.string(upload.expiresAt))) }
        return headers
    }

    /// POST: creation, idempotent per panorama, optionally with the first bytes.
    func create(_ request: Request, _ responder: Responder) -> HandlerResult {
        do {
            let tenant = try admit(request)
            let wanted = try UploadRequest.parse(length: request.headers["upload-length"], metadata: request.headers["upload-metadata"],
                                                 maxLength: Int64(context.config.maxPanoramaBytes))
            let hasBody = request.head.framing.hasBody
            if hasBody, request.headers["content-type"]?.lowercased() != UploadRoutes.offsetType {
                throw ServiceError(.unsupportedMediaType, "a body sent with the creation is \(UploadRoutes.offsetType)")
            }
            // Stored already: answered as a one-shot re-send would, when the digest is declared.
            if let declared = wanted.declaredSHA256, let existing = try context.read({ try TourStore.panorama($0, tenant, wanted.panoramaId) }) {
                return .response(try PanoramaUpload.resend(existing, digest: declared))
            }
            // A creation sent again (its 201 was lost): the same upload, at the offset it holds.
            if let open = try context.read({ try UploadStore.receiving($0, tenant, panoramaId: wanted.panoramaId) }), open.expiresAt > now {
                guard open.length == wanted.length else {
                    throw ServiceError.conflict("panorama \(wanted.panoramaId) has an unfinished upload of another length")
                }
                // Off the event loop: after a restart, opening the session hashes what the file holds.
                context.respond(request, responder) { created(open, offset: try liveSession(open, tenant).offset) }
                return .deferred
            }
            _ = try context.read { try TourStore.panoramaPlace($0, tenant, floorId: wanted.floorId, roomId: wanted.roomId) }
            let upload = try context.write { db -> UploadRecord in
                // Expired leftovers under the same panorama go first (the sweep may not have run yet).
                if let stale = try UploadStore.receiving(db, tenant, panoramaId: wanted.panoramaId) {
                    _ = try UploadStore.delete(db, tenant, stale.id)
                    context.blobs.remove(BlobKey(tenant: tenant, kind: .upload, id: stale.id))
                }
                return try UploadStore.create(db, tenant, id: Identifier.make(), wanted, expiresAt: now + expiry)
            }
            let key = BlobKey(tenant: tenant, kind: .upload, id: upload.id)
            let session = try sessions.session(key, durableOffset: 0, blobs: context.blobs)
            guard hasBody, upload.length > 0 else {
                if upload.length == 0 {
                    // Nothing to send: complete at once.
                    context.respond(request, responder) { try finishIfComplete(upload, tenant, session, offset: 0, answer: created(upload, offset: 0)) }
                    return .deferred
                }
                return .response(created(upload, offset: 0))
            }
            let claim = try session.claim(checksum: nil)
            return .readBody(PatchBody(uploads: self, request: request, tenant: tenant, upload: upload,
                                       session: session, token: claim.token, checksum: nil, creation: true),
                             limit: upload.length)
        } catch {
            return .response(context.answer(request) { throw error })
        }
    }

    /// The upload's live session and its durable offset. When its partial file holds less than
    /// the row records (the file was lost in a crash between finishing the upload and
    /// committing it), the row goes back to what the file holds: the client resends from there.
    private func liveSession(_ upload: UploadRecord, _ tenant: Int64) throws -> (session: UploadSession, offset: Int64) {
        let session = try sessions.session(BlobKey(tenant: tenant, kind: .upload, id: upload.id), durableOffset: upload.offset, blobs: context.blobs)
        let offset = session.durableOffset
        if offset < upload.offset {
            try context.write { try UploadStore.repairOffset($0, tenant, upload.id, offset: offset) }
            context.logger.warn("an upload's partial file holds less than recorded; it continues from there",
                                ["upload": upload.id, "recorded": String(upload.offset), "held": String(offset)])
        }
        return (session, offset)
    }

    private func created(_ upload: UploadRecord, offset: Int64) -> Response {
        Response(status: .created, headers: [HTTPField(name: "Location", value: "/v1/uploads/\(upload.id)")] + progressHeaders(upload, offset: offset))
    }

    /// HEAD: the offset (only fsynced bytes count), the length, no caching. Off the event loop:
    /// after a restart, opening the upload's session hashes what its file holds.
    func head(_ request: Request, _ responder: Responder) -> HandlerResult {
        context.respond(request, responder) {
            let tenant = try admit(request)
            let upload = try upload(request, tenant)
            var headers = progressHeaders(upload, offset: upload.finished ? upload.length : try liveSession(upload, tenant).offset)
            headers.append(HTTPField(name: "Upload-Length", value: String(upload.length)))
            headers.append(HTTPField(name: "Cache-Control", value: "no-store"))
            if !upload.metadata.isEmpty { headers.append(HTTPField(name: "Upload-Metadata", value: upload.metadata)) }
            return Response(status: .ok, headers: headers)
        }
        return .deferred
    }

    /// PATCH: the next bytes, at the offset the server has; a newer PATCH wins.
    func patch(_ request: Request, _ responder: Responder) -> HandlerResult {
        do {
            let tenant = try admit(request)
            guard request.headers["content-type"]?.lowercased() == UploadRoutes.offsetType else {
                throw ServiceError(.unsupportedMediaType, "a PATCH body is \(UploadRoutes.offsetType)")
            }
            let offset = try TusHeaders.integer(request.headers["upload-offset"], "Upload-Offset")
            let checksum = try TusHeaders.checksum(request.headers["upload-checksum"])
            let upload = try upload(request, tenant)
            if upload.finished {
                // The client may have missed the last answer: the end again is no error.
                guard offset == upload.length, !request.head.framing.hasBody else {
                    throw ServiceError(.offsetMismatch, "upload \(upload.id) is complete at \(upload.length) bytes")
                }
                return .response(Response(status: .noContent, headers: progressHeaders(upload, offset: upload.length)))
            }
            let remaining = upload.length - offset
            if let length = request.head.contentLength, length > remaining {
                throw ServiceError(.payloadTooLarge, "the body goes past Upload-Length \(upload.length)")
            }
            let session = try liveSession(upload, tenant).session
            let claim = try session.claim(checksum: checksum?.0)
            guard claim.offset == offset else {
                session.release(claim.token)
                throw ServiceError(.offsetMismatch, "Upload-Offset is \(offset) but the server has \(claim.offset) bytes")
            }
            return .readBody(PatchBody(uploads: self, request: request, tenant: tenant, upload: upload,
                                       session: session, token: claim.token, checksum: checksum?.1, creation: false),
                             limit: max(0, remaining))
        } catch {
            return .response(context.answer(request) { throw error })
        }
    }

    /// The body of a PATCH (or a creation) is complete: durable, recorded, and the panorama
    /// made when it was the last byte.
    func finishBody(_ body: PatchBody) -> Response {
        context.answer(body.request) {
            let offset = try body.session.commit(body.token, expected: body.checksum)
            try record(body.upload, body.tenant, offset: offset)
            let answer = body.creation ? created(body.upload, offset: offset)
                : Response(status: .noContent, headers: progressHeaders(body.upload, offset: offset))
            return try finishIfComplete(body.upload, body.tenant, body.session, offset: offset, answer: answer)
        }
    }

    /// The connection ended mid-body: what arrived is kept (when no checksum must vouch for it).
    func abortBody(_ body: PatchBody) {
        guard let offset = body.session.abort(body.token) else { return }
        do {
            try record(body.upload, body.tenant, offset: offset)
        } catch {
            context.logger.warn("could not record an interrupted upload's offset", ["upload": body.upload.id, "error": "\(error)"])
        }
    }

    private func record(_ upload: UploadRecord, _ tenant: Int64, offset: Int64) throws {
        try context.write { try UploadStore.setOffset($0, tenant, upload.id, offset: offset, expiresAt: now + expiry) }
    }

    /// With the last byte in, the upload becomes the panorama exactly as a one-shot upload
    /// would: the same digest check, the same idempotency, the same file; in place before
    /// the answer.
    private func finishIfComplete(_ upload: UploadRecord, _ tenant: Int64, _ session: UploadSession, offset: Int64, answer: Response) throws -> Response {
        guard offset == upload.length else { return answer }
        let partial = BlobKey(tenant: tenant, kind: .upload, id: upload.id)
        let digest = ByteEncoding.hex(session.durableDigest())
        defer { sessions.end(partial) }
        if let declared = upload.declaredSHA256, declared != digest {
            _ = try context.write { try UploadStore.delete($0, tenant, upload.id) }
            context.blobs.remove(partial)
            throw ServiceError(.digestMismatch, "the upload's sha-256 is \(digest), not the declared \(declared)")
        }
        let panorama = BlobKey(tenant: tenant, kind: .panorama, id: upload.panoramaId)
        do {
            try context.write { db in
                if let existing = try TourStore.panorama(db, tenant, upload.panoramaId) {
                    _ = try PanoramaUpload.resend(existing, digest: digest) // 409 for another digest
                    try UploadStore.markFinished(db, tenant, upload.id)
                    return
                }
                try context.blobs.move(partial, to: panorama)
                do {
                    _ = try TourStore.insertPanorama(db, tenant, id: upload.panoramaId, floorId: upload.floorId, roomId: upload.roomId,
                                                     contentType: upload.contentType, size: upload.length, sha256: digest)
                    try UploadStore.markFinished(db, tenant, upload.id)
                } catch {
                    context.blobs.remove(panorama) // no file without its row
                    throw error
                }
            }
        } catch {
            // Nothing of a refused upload is kept.
            _ = try? context.write { try UploadStore.delete($0, tenant, upload.id) }
            context.blobs.remove(partial)
            throw error
        }
        context.blobs.remove(partial) // a re-send of a stored panorama: its bytes were not needed
        return answer
    }

    /// DELETE: termination; a PATCH in flight stops.
    func terminate(_ request: Request, _ responder: Responder) -> HandlerResult {
        do {
            let tenant = try admit(request)
            let id = try request.uuid("uploadId")
            context.respond(request, responder) {
                guard try context.write({ try UploadStore.delete($0, tenant, id) }) else { throw ServiceError.notFound("upload", id) }
                let key = BlobKey(tenant: tenant, kind: .upload, id: id)
                sessions.end(key)
                context.blobs.remove(key)
                return Response(status: .noContent)
            }
            return .deferred
        } catch {
            return .response(context.answer(request) { throw error })
        }
    }

    /// Removes expired uploads and their partial files; never a panorama.
    func sweepExpired() {
        do {
            let keys = try context.write { try UploadStore.deleteExpired($0, now: now) }
            for key in keys {
                sessions.end(key)
                context.blobs.remove(key)
            }
            if !keys.isEmpty { context.logger.info("expired uploads removed", ["count": String(keys.count)]) }
        } catch {
            context.logger.warn("the upload expiry sweep failed", ["error": "\(error)"])
        }
    }
}

/// Streams a PATCH body (or a creation's first bytes) into the upload's session.
final class PatchBody: BodySink, @unchecked Sendable {
    let uploads: Uploads
    let request: Request
    let tenant: Int64
    let upload: UploadRecord
    let session: UploadSession
    let token: UInt64
    let checksum: [UInt8]?
    let creation: Bool

    init(uploads: Uploads, request: Request, tenant: Int64, upload: UploadRecord,
         session: UploadSession, token: UInt64, checksum: [UInt8]?, creation: Bool) {
        self.uploads = uploads
        self.request = request
        self.tenant = tenant
        self.upload = upload
        self.session = session
        self.token = token
        self.checksum = checksum
        self.creation = creation
    }

    func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTPError) {
        do throws(ServiceError) {
            try session.append(token, bytes)
        } catch {
            throw error.httpError
        }
    }

    func finish(responder: Responder) -> Response? {
        uploads.context.respond(request, responder) { [self] in uploads.finishBody(self) }
        return nil
    }

    func abort() {
        // fsync and a database write: not on the event loop.
        DispatchQueue.global().async { [self] in uploads.abortBody(self) }
    }
}
