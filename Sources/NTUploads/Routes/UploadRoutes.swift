import Foundation
import NTAPIModel
import NTHTTPCore
import NTLogging
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// Resumable panorama uploads: tus 1.0.0 with creation, creation-with-upload, termination,
/// checksum and expiration (docs/api.md "Panoramas — resumable upload"). A finished upload becomes
/// the panorama exactly as a one-shot upload would.
package enum UploadRoutes {
    static let resumable = [HTTPField(name: "Tus-Resumable", value: TusHeaders.version)]
    static let offsetType = "application/offset+octet-stream"

    /// tus and the draft on the API's group: their creation, and an upload's resource for a
    /// credential of the tenant's. tus's routes check the protocol's version first, then the
    /// credential.
    package static func add(to api: inout APIRoutes, _ creations: PanoramaCreations) {
        let (tus, draft) = (creations.tus, creations.draft)
        let maxSize = tus.uploads.settings.maxPanoramaBytes

        api.add(.options, "/v1/uploads", .anyCredential, parse: Addressed.nothing) { _, _, _ in
            Response(status: .noContent, headers: [
                HTTPField(name: "Tus-Resumable", value: TusHeaders.version),
                HTTPField(name: "Tus-Version", value: TusHeaders.version),
                HTTPField(name: "Tus-Extension", value: TusHeaders.extensions),
                HTTPField(name: "Tus-Max-Size", value: String(maxSize)),
                HTTPField(name: "Tus-Checksum-Algorithm", value: TusHeaders.checksumAlgorithms),
            ] + UploadRoutes.draftDiscovery(maxSize))
        }
        // tus, or the IETF draft (`Upload-Draft-Interop-Version` without `Tus-Resumable`) on
        // the same resources.
        api.group(TusVersionCheck()) { api in
            api.add(.post, "/v1/uploads", .panoramaCreation, bodyLimit: maxSize, headers: resumable, answering: DraftUploads.answeringRefusals,
                    parse: { try CreationCommand.post($0.head, maxLength: maxSize) }, creations.execute)
            let resource = Addressed.by("uploadId", AccessTarget.upload)
            api.add(.head, "/v1/uploads/{uploadId}", .scoped(.capture), headers: resumable, parse: resource) { command, principal, request in
                try await answer(.head, UploadTarget(tenant: principal.tenant, uploadId: command.id), request, tus, draft)
            }
            api.add(.patch, "/v1/uploads/{uploadId}", .scoped(.capture), bodyLimit: maxSize, headers: resumable, parse: resource) { command, principal, request in
                try await answer(.patch, UploadTarget(tenant: principal.tenant, uploadId: command.id), request, tus, draft)
            }
            api.add(.delete, "/v1/uploads/{uploadId}", .scoped(.capture), headers: resumable, parse: resource) { command, principal, request in
                try await answer(.delete, UploadTarget(tenant: principal.tenant, uploadId: command.id), request, tus, draft)
            }
        }
    }

    /// An upload's own URL (its creation's `Location`), on the group of upload URLs, which need
    /// no token: the URL is the credential (`UploadCapabilityAuthentication`); a path never
    /// logged. Returns its rules (docs/security.md's table lists them beside the API's).
    package static func add(to capability: inout RouteGroup<UploadTarget>, _ creations: PanoramaCreations) -> [RouteRule] {
        let (tus, draft) = (creations.tus, creations.draft)
        let maxSize = tus.uploads.settings.maxPanoramaBytes
        let pattern = "/v1/uploads/{uploadId}/{capability}"
        capability.group(TusVersionCheck()) { capability in
            capability.add(.head, pattern, headers: resumable, secretPath: true) { target, request in try await answer(.head, target, request, tus, draft) }
            capability.add(.patch, pattern, bodyLimit: maxSize, headers: resumable, secretPath: true) { target, request in
                try await answer(.patch, target, request, tus, draft)
            }
            capability.add(.delete, pattern, headers: resumable, secretPath: true) { target, request in try await answer(.delete, target, request, tus, draft) }
        }
        return [HTTPMethod.head, .patch, .delete].map { RouteRule(method: $0.name, pattern: pattern, access: .uploadCapability) }
    }

    /// An upload's HEAD, PATCH or DELETE, in tus or the draft, as the request speaks.
    private static func answer(_ method: HTTPMethod, _ target: UploadTarget, _ request: Request, _ tus: TusUploads, _ draft: DraftUploads) async throws -> Response {
        let speaksDraft = DraftUploads.speaksDraft(request.headers)
        switch method {
        case .head: return try await speaksDraft ? draft.head(target, request) : tus.head(target, request)
        case .patch: return try await speaksDraft ? draft.append(target, request) : tus.patch(target, request)
        default: return try await speaksDraft ? draft.cancel(target, request) : tus.terminate(target, request)
        }
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

extension UploadRoutes {
    /// What OPTIONS tells a client of the draft (-04 on): the limits of an upload, and that an
    /// append is `application/partial-upload` (-10's `Accept-Patch`).
    package static func draftDiscovery(_ maxSize: Int64) -> [HTTPField] {
        [HTTPField(name: "Upload-Limit", value: "max-size=\(maxSize)"), HTTPField(name: "Accept-Patch", value: "application/partial-upload")]
    }
}

/// A panorama's creation carried out by the protocol that carries it: the one value the route
/// parsed and access was decided on (`APIRoutes`).
package struct PanoramaCreations: Sendable {
    package let panoramas: Panoramas
    package let tus: TusUploads
    package let draft: DraftUploads

    package init(panoramas: Panoramas, tus: TusUploads, draft: DraftUploads) {
        self.panoramas = panoramas
        self.tus = tus
        self.draft = draft
    }

    @Sendable package func execute(_ command: CreationCommand, _ principal: APIPrincipal, _ request: Request) async throws -> Response {
        switch command.carrier {
        case .oneShot:
            switch try await panoramas.store(principal.tenant, command.creation, body: request.body) {
            case .created(let stored): return .document(.created, stored)
            case .resent(let existing): return .document(.ok, existing)
            }
        case .tus:
            return try await tus.create(command, principal, request)
        case .draft(let version, let completes):
            return try await draft.create(command, principal, request, version, completes: completes)
        }
    }
}

/// tus's requests, parsed into the calls of `Uploads`, and their answers.
package struct TusUploads: Sendable {
    package let uploads: Uploads

    package init(uploads: Uploads) {
        self.uploads = uploads
    }

    private func progressHeaders(_ upload: UploadRecord, offset: Int64) -> [HTTPField] {
        var headers = [HTTPField(name: "Upload-Offset", value: String(offset))]
        if !upload.finished { headers.append(HTTPField(name: "Upload-Expires", value: HTTPDate.string(upload.expiresAt))) }
        return headers
    }

    /// POST: creation, idempotent per panorama, optionally with the first bytes.
    func create(_ command: CreationCommand, _ principal: APIPrincipal, _ request: Request) async throws -> Response {
        let wanted = command.upload(grantId: principal.grant?.id, maxLength: uploads.settings.maxPanoramaBytes)
        let hasBody = request.head.framing.hasBody
        if hasBody, request.headers["content-type"]?.lowercased() != UploadRoutes.offsetType {
            throw ServiceError(.unsupportedMediaType, "a body sent with the creation is \(UploadRoutes.offsetType)")
        }
        switch try await uploads.create(principal.tenant, wanted, body: hasBody ? request.body : nil) {
        case .stored(let panorama):
            return .document(.ok, panorama)
        case .upload(let upload, let offset):
            return Response(status: .created, headers: [HTTPField(name: "Location", value: uploads.location(upload, principal.tenant))] + progressHeaders(upload, offset: offset))
        }
    }

    /// HEAD: the offset (only fsynced bytes count), the length, no caching.
    func head(_ target: UploadTarget, _ request: Request) async throws -> Response {
        let upload = try await uploads.upload(target.tenant, target.uploadId)
        let offset = upload.finished ? upload.length : try await uploads.reportedOffset(upload, target.tenant)
        var headers = progressHeaders(upload, offset: offset)
        headers.append(HTTPField(name: "Upload-Length", value: String(upload.length)))
        headers.append(HTTPField(name: "Cache-Control", value: "no-store"))
        if !upload.metadata.isEmpty { headers.append(HTTPField(name: "Upload-Metadata", value: upload.metadata)) }
        return Response(status: .ok, headers: headers)
    }

    /// PATCH: the next bytes, at the offset the server has.
    func patch(_ target: UploadTarget, _ request: Request) async throws -> Response {
        guard request.headers["content-type"]?.lowercased() == UploadRoutes.offsetType else {
            throw ServiceError(.unsupportedMediaType, "a PATCH body is \(UploadRoutes.offsetType)")
        }
        let offset = try TusHeaders.integer(request.headers["upload-offset"], "Upload-Offset")
        let checksum = try TusHeaders.checksum(request.headers["upload-checksum"])
        let reached = try await uploads.append(target.tenant, target.uploadId, at: offset, checksum: checksum, announced: request.head.contentLength,
                                               body: request.body, hasBody: request.head.framing.hasBody)
        return Response(status: .noContent, headers: progressHeaders(reached.upload, offset: reached.offset))
    }

    /// DELETE: termination; a PATCH in flight stops.
    func terminate(_ target: UploadTarget, _ request: Request) async throws -> Response {
        try await uploads.end(tenant: target.tenant, id: target.uploadId)
        return Response(status: .noContent)
    }
}
