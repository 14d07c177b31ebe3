import NTAPIModel
import Foundation
import NTHTTPCore
import NTLogging

/// Resumable panorama uploads: tus 1.0.0 with creation, creation-with-upload, termination,
/// checksum and expiration (docs/api.md "Panoramas — resumable upload"). A finished upload becomes
/// the panorama exactly as a one-shot upload would.
enum UploadRoutes {
    static let resumable = [HTTPField(name: "Tus-Resumable", value: TusHeaders.version)]
    static let offsetType = "application/offset+octet-stream"

    /// `authenticated`: the service's authentication; tus routes check the protocol version
    /// first, then the token. An upload's own URL (`Location`: `/v1/uploads/{uploadId}/{capability}`)
    /// needs no token: the URL is the credential (`UploadCapabilityCheck`).
    static func add(to table: inout GuardedRoutes, _ uploads: Uploads, authenticated: any Middleware) {
        let maxSize = Int64(uploads.context.config.maxPanoramaBytes)
        let (tus, draft) = (TusUploads(uploads: uploads), DraftUploads(uploads: uploads))
        let creations = PanoramaCreations(panoramas: Panoramas(context: uploads.context), tus: tus, draft: draft)

        table.group(authenticated) { table in
            table.add(.options, "/v1/uploads", .anyCredential) { _ in
                Response(status: .noContent, headers: [
                    HTTPField(name: "Tus-Resumable", value: TusHeaders.version),
                    HTTPField(name: "Tus-Version", value: TusHeaders.version),
                    HTTPField(name: "Tus-Extension", value: TusHeaders.extensions),
                    HTTPField(name: "Tus-Max-Size", value: String(maxSize)),
                    HTTPField(name: "Tus-Checksum-Algorithm", value: TusHeaders.checksumAlgorithms),
                ] + UploadRoutes.draftDiscovery(maxSize))
            }
        }
        // tus, or the IETF draft (`Upload-Draft-Interop-Version` without `Tus-Resumable`) on
        // the same resources.
        table.group(TusVersionCheck(), authenticated) { table in
            table.addCreation(.post, "/v1/uploads", bodyLimit: maxSize, headers: resumable, answering: DraftUploads.answeringRefusals,
                              parse: { try PanoramaCreation.post($0.head, maxLength: maxSize) }, creations.execute)
            addUploadRoutes(to: &table, "/v1/uploads/{uploadId}", .scoped(.capture, .upload), tus: tus, draft: draft, maxSize: maxSize)
        }
        table.group(TusVersionCheck(), UploadCapabilityCheck(capabilities: uploads.capabilities, context: uploads.context)) { table in
            addUploadRoutes(to: &table, "/v1/uploads/{uploadId}/{capability}", .uploadCapability, tus: tus, draft: draft, maxSize: maxSize)
        }
    }

    /// An upload's HEAD, PATCH and DELETE, in tus or the draft (through its capability URL, a
    /// path never logged).
    private static func addUploadRoutes(to table: inout GuardedRoutes, _ pattern: String, _ access: Access, tus: TusUploads, draft: DraftUploads, maxSize: Int64) {
        let secret = access == .uploadCapability
        table.add(.head, pattern, access, headers: resumable, secretPath: secret) { request in
            try await (DraftUploads.speaksDraft(request.headers) ? draft.head : tus.head)(request)
        }
        table.add(.patch, pattern, access, bodyLimit: maxSize, headers: resumable, secretPath: secret) { request in
            try await (DraftUploads.speaksDraft(request.headers) ? draft.append : tus.patch)(request)
        }
        table.add(.delete, pattern, access, headers: resumable, secretPath: secret) { request in
            try await (DraftUploads.speaksDraft(request.headers) ? draft.cancel : tus.terminate)(request)
        }
    }
}

extension UploadRoutes {
    /// What OPTIONS tells a client of the draft (-04 on): the limits of an upload, and that an
    /// append is `application/partial-upload` (-10's `Accept-Patch`).
    static func draftDiscovery(_ maxSize: Int64) -> [HTTPField] {
        [HTTPField(name: "Upload-Limit", value: "max-size=\(maxSize)"), HTTPField(name: "Accept-Patch", value: "application/partial-upload")]
    }
}

/// A panorama's creation carried out by the protocol that carries it: the one value the route
/// parsed and access was decided on (`GuardedRoutes.addCreation`).
struct PanoramaCreations: Sendable {
    let panoramas: Panoramas
    let tus: TusUploads
    let draft: DraftUploads

    @Sendable func execute(_ creation: PanoramaCreation, _ request: Request) async throws -> Response {
        switch creation.carrier {
        case .oneShot:
            switch try await panoramas.store(request.tenant, creation, body: request.body) {
            case .created(let stored): return .document(.created, stored)
            case .resent(let existing): return .document(.ok, existing)
            }
        case .tus:
            return try await tus.create(creation, request)
        case .draft(let version, let completes):
            return try await draft.create(creation, request, version, completes: completes)
        }
    }
}

/// tus's requests, parsed into the calls of `Uploads`, and their answers.
struct TusUploads: Sendable {
    let uploads: Uploads

    private func progressHeaders(_ upload: UploadRecord, offset: Int64) -> [HTTPField] {
        var headers = [HTTPField(name: "Upload-Offset", value: String(offset))]
        if !upload.finished { headers.append(HTTPField(name: "Upload-Expires", value: HTTPDate.string(upload.expiresAt))) }
        return headers
    }

    /// POST: creation, idempotent per panorama, optionally with the first bytes.
    func create(_ creation: PanoramaCreation, _ request: Request) async throws -> Response {
        let wanted = creation.upload(grantId: request.grant?.id, maxLength: Int64(uploads.context.config.maxPanoramaBytes))
        let hasBody = request.head.framing.hasBody
        if hasBody, request.headers["content-type"]?.lowercased() != UploadRoutes.offsetType {
            throw ServiceError(.unsupportedMediaType, "a body sent with the creation is \(UploadRoutes.offsetType)")
        }
        switch try await uploads.create(request.tenant, wanted, body: hasBody ? request.body : nil) {
        case .stored(let panorama):
            return .document(.ok, panorama)
        case .upload(let upload, let offset):
            return Response(status: .created, headers: [HTTPField(name: "Location", value: uploads.location(upload, request.tenant))] + progressHeaders(upload, offset: offset))
        }
    }

    /// HEAD: the offset (only fsynced bytes count), the length, no caching.
    @Sendable func head(_ request: Request) async throws -> Response {
        let upload = try await uploads.upload(request.tenant, try request.uuid("uploadId"))
        let offset = upload.finished ? upload.length : try await uploads.reportedOffset(upload, request.tenant)
        var headers = progressHeaders(upload, offset: offset)
        headers.append(HTTPField(name: "Upload-Length", value: String(upload.length)))
        headers.append(HTTPField(name: "Cache-Control", value: "no-store"))
        if !upload.metadata.isEmpty { headers.append(HTTPField(name: "Upload-Metadata", value: upload.metadata)) }
        return Response(status: .ok, headers: headers)
    }

    /// PATCH: the next bytes, at the offset the server has.
    @Sendable func patch(_ request: Request) async throws -> Response {
        let id = try request.uuid("uploadId")
        guard request.headers["content-type"]?.lowercased() == UploadRoutes.offsetType else {
            throw ServiceError(.unsupportedMediaType, "a PATCH body is \(UploadRoutes.offsetType)")
        }
        let offset = try TusHeaders.integer(request.headers["upload-offset"], "Upload-Offset")
        let checksum = try TusHeaders.checksum(request.headers["upload-checksum"])
        let reached = try await uploads.append(request.tenant, id, at: offset, checksum: checksum, announced: request.head.contentLength,
                                               body: request.body, hasBody: request.head.framing.hasBody)
        return Response(status: .noContent, headers: progressHeaders(reached.upload, offset: reached.offset))
    }

    /// DELETE: termination; a PATCH in flight stops.
    @Sendable func terminate(_ request: Request) async throws -> Response {
        try await uploads.end(tenant: request.tenant, id: try request.uuid("uploadId"))
        return Response(status: .noContent)
    }
}
