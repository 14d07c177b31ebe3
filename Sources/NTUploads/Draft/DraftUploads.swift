import Foundation
import NTAPIModel
import NTHashing
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// Uploads iOS resumes by itself: the IETF draft "Resumable Uploads for HTTP", interop
/// versions 3, 5, 6, 7 and 8 (`DraftVersion`; docs/api.md "Panoramas — uploads iOS
/// resumes"), over the same upload core as tus: the same rows, partial files, sessions,
/// ownership across daemons, quotas, expiry and crash-safe finish. A creation is the one-shot
/// `PUT /v1/panoramas/{id}` (as URLSession sends it) or `POST /v1/uploads`, marked by
/// `Upload-Draft-Interop-Version` and its completeness field; its upload resource is
/// `/v1/uploads/{uploadId}`, as tus's are. The draft's requests, parsed into the calls of
/// `Uploads`, and their answers.
package struct DraftUploads: Sendable {
    package let uploads: Uploads

    package init(uploads: Uploads) {
        self.uploads = uploads
    }

    /// Whether a request asks for a draft creation: a version served and a completeness field.
    /// Nil for a plain upload (no version, or one not served: no 104, stored as any other).
    static func draftCreation(_ headers: HTTPHeaders) throws(ServiceError) -> (version: DraftVersion, completes: Bool)? {
        guard case .served(let version) = DraftVersion.asked(headers), let completes = try version.completes(headers) else { return nil }
        return (version, completes)
    }

    /// Whether a request to an upload resource speaks the draft rather than tus.
    static func speaksDraft(_ headers: HTTPHeaders) -> Bool {
        headers["tus-resumable"] == nil && headers[DraftVersion.headerName] != nil
    }

    /// The version of a request to an upload resource: one served, else 400 naming those.
    private static func servedVersion(_ headers: HTTPHeaders) throws(ServiceError) -> DraftVersion {
        guard case .served(let version) = DraftVersion.asked(headers) else {
            throw .badRequest("Upload-Draft-Interop-Version \(headers[DraftVersion.headerName] ?? "") is not served; the versions served are \(DraftVersion.servedList)")
        }
        return version
    }

    private func limits(_ upload: UploadRecord?) -> DraftUploadLimits {
        DraftUploadLimits(maxSize: uploads.settings.maxPanoramaBytes, secondsLeft: upload.map { $0.expiresAt - uploads.now } ?? uploads.expiry)
    }


    /// Runs `body`, a creation's parse and execution; when the request speaks the draft, its
    /// refusals are answered as its version says (`answering`).
    @Sendable package static func answeringRefusals(_ request: Request, _ body: () async throws -> Response) async throws -> Response {
        guard speaksDraft(request.headers), case .served(let version) = DraftVersion.asked(request.headers) else { return try await body() }
        return try await answering(version, body)
    }

    /// Runs a draft procedure; its refusals are answered as `version` says
    /// (`DraftAnswers.refusal`). The server's own failures go on to the service's errors.
    private static func answering(_ version: DraftVersion, _ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let refusal as DraftRefusal {
            guard !refusal.error.isServerFailure else { throw refusal.error }
            return DraftAnswers.refusal(refusal, version)
        } catch let error as ServiceError where !error.isServerFailure {
            return DraftAnswers.refusal(DraftRefusal(error: error), version)
        }
    }

    // MARK: Creation

    /// A creation: `PUT /v1/panoramas/{panoramaId}?floorId=…[&roomId=…]` or
    /// `POST /v1/uploads?panoramaId=…&floorId=…[&roomId=…]`, the panorama's media type in
    /// `Content-Type` and its digest, if declared, in `Repr-Digest` (`PanoramaCreation`). The
    /// upload exists, and the 104 says where, before a byte of the body is read.
    func create(_ command: CreationCommand, _ principal: APIPrincipal, _ request: Request, _ version: DraftVersion, completes: Bool) async throws -> Response {
        try await Self.answering(version) {
            let (tenant, creation) = (principal.tenant, command.creation)
            // A re-send whose digest is declared is answered without reading the body again.
            if let resent = try await uploads.panoramas.resent(tenant, creation) { return .document(.ok, resent) }
            try await uploads.panoramas.checkPlace(tenant, creation)
            let wanted = command.upload(grantId: principal.grant?.id, maxLength: uploads.settings.maxPanoramaBytes)
            let key = BlobKey(tenant: tenant, kind: .upload, id: Identifier.make())
            return try await uploads.owning(key) { owner in
                // A new creation for the panorama starts its bytes again: an older unfinished
                // upload of it by the same principal (its client gave up on it) ends.
                guard case .created(let upload) = try await uploads.open(key, wanted, now: uploads.now, replacingOpen: true) else {
                    throw ServiceError(.internal, "a replacing creation found an open upload")
                }
                let location = uploads.location(upload, tenant)
                let interim = uploads.settings.interimResponses ? DraftAnswers.interim(version, location: location, limits: limits(upload)) : nil
                return try await transfer(request, tenant, version, upload, owner: owner, at: 0, completes: completes, location: location, interim: interim)
            }
        }
    }

    /// The body of a creation or append at `offset` into the upload, then its answer: the
    /// panorama once the upload completes, else the offset reached. A creation's 104 (`interim`)
    /// goes once this transfer has claimed the upload and before a byte of its body is read: an
    /// offset retrieval it leads to (the client cut off right after) finds the transfer writing,
    /// and waits for the bytes it was sent.
    private func transfer(_ request: Request, _ tenant: Int64, _ version: DraftVersion, _ found: UploadRecord, owner: UInt64, at offset: Int64,
                          completes: Bool, location: String?, interim: [HTTPField]? = nil) async throws -> Response {
        var upload = found
        guard let session = try await uploads.current(uploads.partialKey(upload, tenant), owner: owner).session else {
            throw DraftRefusal(error: DraftProblem.completedUpload.error("upload \(upload.id) is complete"), problem: .completedUpload,
                               offset: upload.length, uploadComplete: true)
        }
        // A request's own content digest (the draft, -06 on: RFC 9530's Content-Digest) vouches
        // for its bytes: a mismatch appends none of them.
        let contentDigest = try ReprDigest.sha256(request.headers["content-digest"], field: "Content-Digest")
        // One daemon keeps an ended transfer's bytes at the takeover, so its bodies need no
        // durable steps (each an fsync and a commit); several continue from what is recorded.
        let reached = try await session.withClaim(checksum: contentDigest == nil ? nil : .sha256, keepingLive: true,
                                                  stepping: uploads.ownership.spansDaemons) { claim in
            // What an older transfer had written is kept: recorded before any answer names it.
            if claim.offset > upload.offset { try await uploads.record(upload, tenant, offset: claim.offset, owner: owner) }
            guard claim.offset == offset else {
                throw DraftRefusal(error: DraftProblem.mismatchingOffset.error("Upload-Offset is \(offset) but the upload holds \(claim.offset) bytes"),
                                   problem: .mismatchingOffset, offset: claim.offset, providedOffset: offset)
            }
            if let length = try DraftLength.declared(version, headers: request.headers, contentLength: request.head.contentLength, offset: offset,
                                                     completes: completes), !(upload.lengthKnown && length == upload.length) {
                guard !upload.lengthKnown, (offset...upload.length).contains(length) else {
                    let held = upload.lengthKnown ? "is \(upload.length)" : "is past its \(offset) bytes and within \(upload.length)"
                    throw DraftRefusal(error: DraftProblem.inconsistentLength.error("the upload's length \(held), not \(length)"),
                                       problem: .inconsistentLength, offset: offset)
                }
                try await uploads.recordLength(upload, tenant, length)
                (upload.length, upload.lengthKnown) = (length, true)
            }
            if let interim { request.sendInterim(.uploadResumptionSupported, headers: interim) }
            do {
                // A body announced past the room is refused before a byte of it is read.
                if let announced = request.head.contentLength, announced > upload.length - offset {
                    throw ServiceError(.payloadTooLarge, "the body's \(announced) bytes go past the most the upload may hold, \(upload.length)")
                }
                return try await uploads.append(request.body, upload, tenant, session, token: claim.token, checksum: contentDigest, room: upload.length - offset,
                                                completes: completes, owner: owner)
            } catch let error as ServiceError where error.code == .payloadTooLarge && upload.lengthKnown {
                // Past the length recorded: 400, and from -06 on the upload is no more.
                if version.overrunInvalidates { try? await uploads.end(tenant: tenant, id: upload.id) }
                throw DraftRefusal(error: DraftProblem.inconsistentLength.error("the body goes past the upload's length \(upload.length)"),
                                   problem: .inconsistentLength, offset: version.overrunInvalidates ? nil : session.durableOffset)
            } catch let error as ServiceError where !error.isServerFailure {
                throw DraftRefusal(error: error, offset: session.durableOffset)
            }
        }
        guard completes else { return DraftAnswers.incomplete(version, offset: reached, location: location, limits: limits(upload)) }
        guard !upload.lengthKnown || reached == upload.length else {
            throw DraftRefusal(error: DraftProblem.inconsistentLength.error("the upload ends at \(reached) bytes, not at its length \(upload.length)"),
                               problem: .inconsistentLength, offset: reached)
        }
        (upload.length, upload.lengthKnown, upload.awaitsCompletion) = (reached, true, false)
        let finishing: Uploads.FinishedUpload?
        do {
            finishing = try await uploads.finishIfComplete(upload, tenant, offset: reached, owner: owner)
        } catch let error as ServiceError where !error.isServerFailure {
            // Every byte is in: this answer is about the representation (a digest that does not
            // match ends the upload), so it says complete (-06 on), not "resume".
            throw DraftRefusal(error: error, uploadComplete: true)
        }
        guard let finished = finishing else {
            throw ServiceError.notFound("panorama", upload.panoramaId) // deleted since it was finished
        }
        let target = Response.document(finished.created ? .created : .ok, finished.panorama)
        return DraftAnswers.completed(version, target, length: reached, location: location)
    }

    // MARK: The upload resource

    /// HEAD: offset retrieval. A transfer still in flight stops first (the bytes it wrote kept,
    /// made durable and recorded), so the offset answered is the one the next append must name, and
    /// a restart cannot take it back.
    func head(_ target: UploadTarget, _ request: Request) async throws -> Response {
        let version = try Self.servedVersion(request.headers)
        return try await Self.answering(version) {
            try Self.refuseFields(version.fieldsRefusedOnRetrieval, request)
            let answer = { (record: UploadRecord, offset: Int64) in
                DraftAnswers.offset(version, offset: offset, complete: record.finished, length: record.lengthKnown ? record.length : nil, limits: limits(record))
            }
            let found = try await uploads.upload(target.tenant, target.uploadId)
            if found.finished { return answer(found, found.length) }
            let tenant = target.tenant
            return try await uploads.owning(uploads.partialKey(found, tenant)) { owner in
                try await uploads.retrieving(found, tenant, owner: owner, {
                    let now = try await uploads.current(uploads.partialKey(found, tenant), owner: owner)
                    var offset = now.offset
                    if let session = now.session {
                        await uploads.transferEnded(session)
                        offset = try await uploads.caughtUp(now.record, tenant,
                                                            offset: try await session.withClaim(checksum: nil, keepingLive: true) { $0.offset }, owner: owner)
                        // Every byte in and said complete, but not finished (a crash): it finishes now.
                        if try await uploads.finishIfComplete(now.record, tenant, offset: offset, owner: owner) != nil {
                            return DraftAnswers.offset(version, offset: offset, complete: true, length: offset, limits: limits(now.record))
                        }
                    }
                    return answer(now.record, offset)
                }, takenOver: answer)
            }
        }
    }

    /// PATCH: upload append at `Upload-Offset`, a newer request ending an older one still in
    /// flight (its durable bytes kept), on this daemon or another.
    func append(_ target: UploadTarget, _ request: Request) async throws -> Response {
        let version = try Self.servedVersion(request.headers)
        return try await Self.answering(version) {
            if version.appendNeedsPartialUploadType, request.headers["content-type"]?.lowercased() != "application/partial-upload" {
                throw ServiceError(.unsupportedMediaType, "an upload append is application/partial-upload")
            }
            guard let text = request.headers["upload-offset"], let offset = StructuredField.integer(text), offset >= 0 else {
                throw ServiceError.badRequest("an upload append names its Upload-Offset, a non-negative integer")
            }
            let said = try version.completes(request.headers)
            if version.appendMustSayCompleteness, said == nil { throw ServiceError.badRequest("an upload append says \(version.completenessField)") }
            let key = BlobKey(tenant: target.tenant, kind: .upload, id: target.uploadId)
            return try await uploads.owning(key) { owner in
                let found = try await uploads.upload(target.tenant, key.id)
                if found.finished {
                    throw DraftRefusal(error: DraftProblem.completedUpload.error("upload \(found.id) is complete"), problem: .completedUpload,
                                       offset: found.length, uploadComplete: true)
                }
                return try await transfer(request, target.tenant, version, found, owner: owner, at: offset, completes: said ?? true, location: nil)
            }
        }
    }

    /// DELETE: cancellation; a transfer in flight stops.
    func cancel(_ target: UploadTarget, _ request: Request) async throws -> Response {
        let version = try Self.servedVersion(request.headers)
        return try await Self.answering(version) {
            try Self.refuseFields(version.fieldsRefusedOnRetrieval, request)
            try await uploads.end(tenant: target.tenant, id: target.uploadId)
            return Response(status: .noContent)
        }
    }

    /// Offset retrieval and cancellation refuse the fields of a transfer (400).
    private static func refuseFields(_ names: [String], _ request: Request) throws(ServiceError) {
        for name in names where request.headers[name.lowercased()] != nil {
            throw .badRequest("a \(request.method.name) of an upload carries no \(name)")
        }
    }
}
