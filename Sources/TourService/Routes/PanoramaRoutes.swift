#if canImport(Glibc)
import Glibc
#endif
import Hashing
import HTTPCore

/// One-shot panorama uploads and their content (API.md "Panoramas — one-shot upload").
enum PanoramaRoutes {
    static func add(to table: inout RouteTable, _ api: Endpoints) {
        let context = api.context

        table.add(.put, "/v1/panoramas/{panoramaId}", bodyLimit: Int64(context.config.maxPanoramaBytes), api.upload { request, tenant in
            let id = try request.uuid("panoramaId")
            let floorId = try Identifier.validated(request.queryParameter("floorId"), "floorId")
            let roomId = try request.queryParameter("roomId").map { text throws(ServiceError) in try Identifier.validated(text, "roomId") }
            let contentType = try PanoramaMediaType.validated(request.headers["content-type"])
            let declared = try ReprDigest.sha256(request.headers["repr-digest"]).map(ByteEncoding.hex)
            // A re-send whose digest is declared is answered without reading the body again.
            if let declared, let existing = try context.read({ try TourStore.panorama($0, tenant, id) }) {
                return .answer(try PanoramaUpload.resend(existing, digest: declared))
            }
            _ = try context.read { try TourStore.panoramaPlace($0, tenant, floorId: floorId, roomId: roomId) }
            return .store { incoming in
                let digest = ByteEncoding.hex(try incoming.sync())
                if let declared, declared != digest {
                    throw ServiceError(.digestMismatch, "the body's sha-256 is \(digest), not the declared \(declared)")
                }
                let key = BlobKey(tenant: tenant, kind: .panorama, id: id)
                return try context.write { db -> Response in
                    if let existing = try TourStore.panorama(db, tenant, id) { return try PanoramaUpload.resend(existing, digest: digest) }
                    try context.blobs.commit(incoming, as: key)
                    do {
                        let stored = try TourStore.insertPanorama(db, tenant, id: id, floorId: floorId, roomId: roomId,
                                                                  contentType: contentType, size: incoming.size, sha256: digest)
                        return .json(.created, encodeJSON(stored.json))
                    } catch {
                        context.blobs.remove(key) // the row was refused: no file without its row
                        throw error
                    }
                }
            }
        })

        table.add(.get, "/v1/panoramas/{panoramaId}", api.plain { request, tenant in
            let id = try request.uuid("panoramaId")
            guard let panorama = try context.read({ try TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            return .json(.ok, encodeJSON(panorama.json))
        })

        table.add(.get, "/v1/panoramas/{panoramaId}/content", api.plain { request, tenant in
            let id = try request.uuid("panoramaId")
            guard let panorama = try context.read({ try TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            return try PanoramaContent.response(panorama, path: context.blobs.path(BlobKey(tenant: tenant, kind: .panorama, id: id)),
                                                range: request.headers["range"], ifNoneMatch: request.headers["if-none-match"])
        })

        table.add(.delete, "/v1/panoramas/{panoramaId}", api.plain { request, tenant in
            let id = try request.uuid("panoramaId")
            guard try context.write({ try TourStore.deletePanorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            context.blobs.remove(BlobKey(tenant: tenant, kind: .panorama, id: id))
            return Response(status: .noContent)
        })
    }
}

/// The idempotency of panorama ids, shared by one-shot and resumable uploads.
enum PanoramaUpload {
    /// A panorama id arriving again: the same digest is a harmless re-send (200, nothing
    /// written), another digest a conflict.
    static func resend(_ existing: PanoramaRecord, digest: String) throws(ServiceError) -> Response {
        guard existing.sha256 == digest else {
            throw ServiceError.conflict("panorama \(existing.id) is stored with another digest")
        }
        return .json(.ok, encodeJSON(existing.json))
    }
}

/// GET …/content: the bytes, whole or a range (RFC 9110 §14), with the digest as ETag.
enum PanoramaContent {
    static func response(_ panorama: PanoramaRecord, path: String, range: String?, ifNoneMatch: String?) throws -> Response {
        let etag = "\"\(panorama.sha256)\""
        var headers = [HTTPField(name: "ETag", value: etag), HTTPField(name: "Accept-Ranges", value: "bytes")]
        if let ifNoneMatch, ifNoneMatch == "*" || ifNoneMatch.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
            return Response(status: .notModified, headers: headers)
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ServiceError(.internal, "the file of panorama \(panorama.id) cannot be opened") }
        switch ByteRange.parse(range, size: panorama.size) {
        case .whole:
            if let bytes = ByteEncoding.bytes(fromHex: panorama.sha256) {
                headers.append(HTTPField(name: "Repr-Digest", value: "sha-256=:\(ByteEncoding.base64(bytes)):"))
            }
            return Response(status: .ok, contentType: panorama.contentType, headers: headers,
                            body: .file(FileRegion(fd: fd, offset: 0, length: panorama.size)))
        case .part(let part):
            headers.append(HTTPField(name: "Content-Range", value: "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(panorama.size)"))
            return Response(status: .partialContent, contentType: panorama.contentType, headers: headers,
                            body: .file(FileRegion(fd: fd, offset: part.lowerBound, length: part.upperBound - part.lowerBound)))
        case .unsatisfiable:
            close(fd)
            var error = ServiceError(.rangeNotSatisfiable, "the range is outside the \(panorama.size) bytes").httpError
            error.headers.append(HTTPField(name: "Content-Range", value: "bytes */\(panorama.size)"))
            return .error(error)
        }
    }
}

/// A `Range: bytes=…` header of one range (RFC 9110 §14.1.2). Several ranges, or a header
/// this does not understand, are answered whole, as §14.2 allows.
enum ByteRange: Equatable {
    case whole
    case part(Range<Int64>)
    case unsatisfiable

    static func parse(_ header: String?, size: Int64) -> ByteRange {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        if parts[0].isEmpty {
            // A suffix: the last N bytes.
            guard let count = Int64(parts[1]), count >= 0 else { return .whole }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - count)..<size)
        }
        guard let first = Int64(parts[0]), first >= 0 else { return .whole }
        guard first < size else { return .unsatisfiable }
        if parts[1].isEmpty { return .part(first..<size) }
        guard let last = Int64(parts[1]), last >= first else { return .whole }
        return .part(first..<(min(last, size - 1) + 1))
    }
}
