import Foundation
import Hashing
import HTTPCore

/// One-shot panorama uploads and their content (API.md "Panoramas — one-shot upload").
enum PanoramaRoutes {
    static func add(to table: inout RouteTable, _ context: ServiceContext) {
        table.add(.put, "/v1/panoramas/{panoramaId}", bodyLimit: Int64(context.config.maxPanoramaBytes)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            let floorId = try Identifier.validated(try request.queryParameter("floorId"), "floorId")
            let roomId = try request.queryParameter("roomId").map { text throws(ServiceError) in try Identifier.validated(text, "roomId") }
            let contentType = try PanoramaMediaType.validated(request.headers["content-type"])
            let declared = try ReprDigest.sha256(request.headers["repr-digest"]).map(ByteEncoding.hex)
            // A re-send whose digest is declared is answered without reading the body again.
            if let declared, let existing = try await context.read({ try TourStore.panorama($0, tenant, id) }) {
                return try PanoramaUpload.resend(existing, digest: declared)
            }
            _ = try await context.read { try TourStore.panoramaPlace($0, tenant, floorId: floorId, roomId: roomId) }
            let received = try await context.blobs.receive(request.body)
            if let declared, declared != received.sha256 {
                await context.blobs.discard(received)
                throw ServiceError(.digestMismatch, "the body's sha-256 is \(received.sha256), not the declared \(declared)")
            }
            // In place before its row is committed: the row is the switch.
            let key = BlobKey(tenant: tenant, kind: .panorama, id: id)
            return try await context.panoramaTurns.withLock(key) {
                let placement: PanoramaPlacement
                do {
                    placement = try await context.placePanorama(key) { try await context.blobs.place(received, as: key) }
                } catch {
                    await context.blobs.discard(received)
                    throw error
                }
                if case .stored(let existing) = placement {
                    await context.blobs.discard(received)
                    return try PanoramaUpload.resend(existing, digest: received.sha256)
                }
                context.crashPoints.reached(.panoramaPlaced)
                let stored: PanoramaRecord
                do {
                    stored = try await context.write { db in
                        try TourStore.insertPanorama(db, tenant, id: id, floorId: floorId, roomId: roomId,
                                                     contentType: contentType, size: received.size, sha256: received.sha256)
                    }
                } catch {
                    await context.blobs.remove(key) // the row was refused: no file without its row
                    throw error
                }
                context.crashPoints.reached(.panoramaCommitted)
                return .json(.created, encodeJSON(stored.json))
            }
        }

        table.add(.get, "/v1/panoramas/{panoramaId}") { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            guard let panorama = try await context.read({ try TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            return .json(.ok, encodeJSON(panorama.json))
        }

        table.add(.get, "/v1/panoramas/{panoramaId}/content") { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            guard let panorama = try await context.read({ try TourStore.panorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
            switch PanoramaContent.answer(panorama, range: request.headers["range"], ifNoneMatch: request.headers["if-none-match"]) {
            case .response(let response):
                return response
            case .bytes(let range, var response):
                let fd = try await context.blobs.openForReading(BlobKey(tenant: tenant, kind: .panorama, id: id))
                response.body = .file(FileRegion(fd: fd, offset: range.lowerBound, length: range.upperBound - range.lowerBound))
                return response
            }
        }

        table.add(.delete, "/v1/panoramas/{panoramaId}") { request in
            let (tenant, id) = (request.tenant, try request.uuid("panoramaId"))
            let key = BlobKey(tenant: tenant, kind: .panorama, id: id)
            return try await context.panoramaTurns.withLock(key) {
                guard try await context.write({ try TourStore.deletePanorama($0, tenant, id) }) else { throw ServiceError.notFound("panorama", id) }
                await context.blobs.remove(key)
                return Response(status: .noContent)
            }
        }
    }
}

/// Where a panorama's file stands once its name is asked for.
enum PanoramaPlacement {
    /// The file has the panorama's name; its row is to be committed (or the file removed).
    case placed
    /// The panorama is stored already: this row.
    case stored(PanoramaRecord)
}

extension ServiceContext {
    /// Gives panorama `key` its file with `put` (false when the name is taken), or finds it
    /// stored. The caller holds the panorama's turn until its commit, so a re-send arriving
    /// while the first request is still storing waits and is answered as a re-send. A name
    /// taken without a row is then a file a failed removal left: it goes, and `put` runs again.
    func placePanorama(_ key: BlobKey, by put: () async throws -> Bool) async throws -> PanoramaPlacement {
        if try await put() { return .placed }
        if let existing = try await read({ try TourStore.panorama($0, key.tenant, key.id) }) { return .stored(existing) }
        logger.warn("a panorama file without its row is replaced", ["panorama": key.id])
        await blobs.remove(key)
        guard try await put() else { throw ServiceError(.internal, "panorama \(key.id) cannot be placed") }
        return .placed
    }

    /// Removes panorama files after the commit that dropped their rows, each in its turn; one
    /// stored again meanwhile (a new row) keeps its file.
    func removePanoramaFiles(_ keys: [BlobKey]) async {
        for key in keys {
            try? await panoramaTurns.withLock(key) {
                guard try await read({ try TourStore.panorama($0, key.tenant, key.id) }) == nil else { return }
                await blobs.remove(key)
            }
        }
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
    enum Answer {
        /// Send this range of the file with this head.
        case bytes(Range<Int64>, Response)
        /// Answer without the file (304, 416).
        case response(Response)
    }

    static func answer(_ panorama: PanoramaRecord, range: String?, ifNoneMatch: String?) -> Answer {
        let etag = "\"\(panorama.sha256)\""
        var headers = [HTTPField(name: "ETag", value: etag), HTTPField(name: "Accept-Ranges", value: "bytes")]
        if let ifNoneMatch, ifNoneMatch == "*" || ifNoneMatch.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
            return .response(Response(status: .notModified, headers: headers))
        }
        switch ByteRange.parse(range, size: panorama.size) {
        case .whole:
            if let bytes = ByteEncoding.bytes(fromHex: panorama.sha256) {
                headers.append(HTTPField(name: "Repr-Digest", value: "sha-256=:\(ByteEncoding.base64(bytes)):"))
            }
            return .bytes(0..<panorama.size, Response(status: .ok, contentType: panorama.contentType, headers: headers))
        case .part(let part):
            headers.append(HTTPField(name: "Content-Range", value: "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(panorama.size)"))
            return .bytes(part, Response(status: .partialContent, contentType: panorama.contentType, headers: headers))
        case .unsatisfiable:
            var error = ServiceError(.rangeNotSatisfiable, "the range is outside the \(panorama.size) bytes").httpError
            error.headers.append(HTTPField(name: "Content-Range", value: "bytes */\(panorama.size)"))
            return .response(.error(error))
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
