import NTAPIModel
import NTHashing
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// A panorama's creation as any protocol asks for it (a one-shot PUT, a tus POST, the IETF
/// draft's PUT or POST), parsed once from the request: access is decided on this value and the
/// use case executes the same value (tusd hands one `FileInfo` to its pre-create hook and its
/// store). A request names each thing once: the path, the query and tus's `Upload-Metadata` may
/// each carry an id or a position, and where two of them name one and disagree, the request is
/// refused (400) before anything is read or checked.
package struct CreationCommand: Command, Equatable {
    /// Which protocol carries the bytes.
    enum Carrier: Equatable, Sendable {
        /// `PUT /v1/panoramas/{id}` with the whole image.
        case oneShot
        /// tus 1.0.0's creation: its `Upload-Metadata` header as sent (HEAD answers it back).
        case tus(metadata: String)
        /// The IETF draft's creation, in `version`; `completes`: its body is the whole upload.
        case draft(DraftVersion, completes: Bool)
    }

    var creation: PanoramaCreation
    /// The upload's length when the request says it (tus always; the draft when it does); nil
    /// for a one-shot upload (its body's end) and a draft upload of a length not said yet.
    var length: Int64?
    var carrier: Carrier

    /// A grant must hold the floor it goes on, and a panorama already stored under its id.
    package var target: AccessTarget? { .floor(creation.floorId) }
    package var targetIfStored: AccessTarget? { .panorama(creation.panoramaId) }

    /// `PUT /v1/panoramas/{panoramaId}` (`panoramaId`, the path's): a one-shot upload, or the
    /// draft's creation when its headers say so. `maxLength`: the most a panorama may have
    /// (`maxPanoramaBytes`).
    package static func put(_ request: RequestHead, panoramaId: String, maxLength: Int64) throws -> CreationCommand {
        let names = try Names(request, path: ["panoramaId": panoramaId])
        if let draft = try DraftUploads.draftCreation(request.headers) {
            return try draftCreation(request, names, draft.version, completes: draft.completes, maxLength: maxLength)
        }
        try PartialUploadMarks.refuseParts(request.headers)
        return CreationCommand(creation: try names.creation(contentType: request.headers["content-type"]), length: nil, carrier: .oneShot)
    }

    /// `POST /v1/uploads`: tus's creation, or the draft's (`Upload-Draft-Interop-Version` without
    /// `Tus-Resumable`).
    static func post(_ request: RequestHead, maxLength: Int64) throws -> CreationCommand {
        let names = try Names(request, path: [:])
        guard DraftUploads.speaksDraft(request.headers) else {
            let length = try TusHeaders.integer(request.headers["upload-length"], "Upload-Length")
            guard length <= maxLength else { throw ServiceError(.payloadTooLarge, "Upload-Length exceeds Tus-Max-Size \(maxLength)") }
            return CreationCommand(creation: try names.creation(contentType: names.metadata["contentType"]), length: length,
                                   carrier: .tus(metadata: request.headers["upload-metadata"] ?? ""))
        }
        guard let creation = try DraftUploads.draftCreation(request.headers) else {
            try PartialUploadMarks.refuseParts(request.headers)
            if case .served(let version) = DraftVersion.asked(request.headers) {
                throw ServiceError.badRequest("a creation of the draft says \(version.completenessField)")
            }
            throw ServiceError.badRequest("Upload-Draft-Interop-Version \(request.headers[DraftVersion.headerName] ?? "") is not served "
                                          + "(\(DraftVersion.servedList)): POST /v1/uploads "
                                          + "is then tus (Tus-Resumable: 1.0.0), and a plain upload is PUT /v1/panoramas/{panoramaId}")
        }
        return try draftCreation(request, names, creation.version, completes: creation.completes, maxLength: maxLength)
    }

    private static func draftCreation(_ request: RequestHead, _ names: Names, _ version: DraftVersion, completes: Bool, maxLength: Int64) throws -> CreationCommand {
        guard request.headers["upload-offset"] == nil else { throw ServiceError.badRequest("a creation carries no Upload-Offset") }
        let length = try DraftLength.declared(version, headers: request.headers, contentLength: request.contentLength, offset: 0, completes: completes)
        if let length, length > maxLength {
            throw ServiceError(.payloadTooLarge, "the upload's \(length) bytes pass the most a panorama may have, \(maxLength)")
        }
        return CreationCommand(creation: try names.creation(contentType: request.headers["content-type"]), length: length,
                               carrier: .draft(version, completes: completes))
    }

    /// The row of the resumable upload this creation opens, begun by `grantId` (nil: a tenant
    /// token). `maxLength` stands for a length not said yet.
    func upload(grantId: String?, maxLength: Int64) -> UploadRequest {
        let metadata = if case .tus(let metadata) = carrier { metadata } else { "" }
        let awaits = if case .tus = carrier { false } else { true }
        return UploadRequest(creation: creation, grantId: grantId, length: length ?? maxLength, lengthKnown: length != nil, metadataHeader: metadata,
                             awaitsCompletion: awaits)
    }

    /// Where a request names the things of a creation: its path, its query and tus's
    /// `Upload-Metadata`, each read once.
    private struct Names {
        let path: [String: String]
        let query: [String: String]
        let metadata: [String: String]
        let reprDigest: [UInt8]?

        init(_ request: RequestHead, path: [String: String]) throws {
            self.path = path
            var query: [String: String] = [:]
            for name in ["panoramaId", "floorId", "roomId", "x", "y", "heading", "height"] {
                if let value = try request.queryParameter(name) { query[name] = value }
            }
            self.query = query
            metadata = try TusHeaders.metadata(request.headers["upload-metadata"])
            reprDigest = try ReprDigest.sha256(request.headers["repr-digest"])
        }

        /// The one value `name` has wherever it is given; 400 where two places disagree
        /// (`same` says when two texts name one value).
        private func agreed(_ name: String, same: (String, String) -> Bool) throws(ServiceError) -> String? {
            let given = [("the path", path[name]), ("the query", query[name]), ("Upload-Metadata", metadata[name])]
                .compactMap { place, value in value.map { (place, $0) } }
            guard let first = given.first else { return nil }
            if let other = given.dropFirst().first(where: { !same(first.1, $0.1) }) {
                throw .badRequest("\(name) is \(first.1.prefix(80)) in \(first.0) but \(other.1.prefix(80)) in \(other.0): "
                                  + "a creation names each thing once, or the same in each place")
            }
            return first.1
        }

        func optionalId(_ name: String) throws(ServiceError) -> String? {
            try agreed(name) { $0.lowercased() == $1.lowercased() }.map { text throws(ServiceError) in try Identifier.checked(text, name) }
        }

        func id(_ name: String) throws(ServiceError) -> String {
            guard let id = try optionalId(name) else {
                throw .badRequest("a panorama's creation names its \(name) (the query, or tus's Upload-Metadata)")
            }
            return id
        }

        /// The creation these names make, its media type `contentType` (the protocol's own field).
        func creation(contentType: String?) throws(ServiceError) -> PanoramaCreation {
            PanoramaCreation(panoramaId: try id("panoramaId"), floorId: try id("floorId"), roomId: try optionalId("roomId"), position: try position(),
                             contentType: try PanoramaMediaType.validated(contentType), declaredSHA256: try declaredDigest())
        }

        /// `x`, `y`, `heading` and `height`, each compared as a number where given twice.
        func position() throws(ServiceError) -> PanoramaPosition? {
            let number = { (a: String, b: String) in a == b || (Double(a) != nil && Double(a) == Double(b)) }
            return try PanoramaPosition.checked(x: try agreed("x", same: number), y: try agreed("y", same: number),
                                                heading: try agreed("heading", same: number), height: try agreed("height", same: number))
        }

        /// The SHA-256 the client declares: tus's `sha256` (hex) or `Repr-Digest` (RFC 9530).
        func declaredDigest() throws(ServiceError) -> String? {
            let hex = try agreed("sha256") { $0.lowercased() == $1.lowercased() }.map { text throws(ServiceError) -> String in
                guard let bytes = ByteEncoding.bytes(fromHex: text), bytes.count == 32 else {
                    throw .badRequest("sha256 in Upload-Metadata must be 64 hex digits")
                }
                return ByteEncoding.hex(bytes)
            }
            let header = reprDigest.map(ByteEncoding.hex)
            if let hex, let header, hex != header {
                throw .badRequest("the sha256 in Upload-Metadata and Repr-Digest disagree: a creation declares its digest once")
            }
            return hex ?? header
        }
    }
}
