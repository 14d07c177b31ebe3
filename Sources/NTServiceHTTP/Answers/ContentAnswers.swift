import Foundation
import NTHashing
import NTHTTPCore
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// Who may send a stored file's bytes: the store itself (a presigned URL, with
/// `s3PresignedReads`), or toursd alone. What a share link or a viewer session shows goes
/// through toursd, so it never outlives the link: a URL that works for `s3PresignedSeconds`
/// would outlive a revocation, and the link's own expiry.
package enum ContentSender {
    case storeMayRedirect
    case toursdOnly
}

/// The answers of GETs of stored files (a panorama's content, a world map, an original image).
package struct ContentAnswers: Sendable {
    package let blobs: any BlobStore

    package init(blobs: any BlobStore) {
        self.blobs = blobs
    }

    /// Answers a GET of a stored file: 304, 416, or its bytes (sent from the file, or by the
    /// store when `sender` lets it).
    package func content(_ key: BlobKey, _ content: StoredContent, for request: Request, sender: ContentSender) async throws -> Response {
        switch content.answer(range: request.headers["range"], ifNoneMatch: request.headers["if-none-match"], ifRange: request.headers["if-range"]) {
        case .response(let response):
            return response
        case .bytes(let range, var response):
            if sender == .storeMayRedirect, let url = blobs.readURL(key) {
                // The store sends the bytes itself (the client's Range goes along); the ETag stays ours.
                let headers = response.headers.filter { $0.name == "ETag" }
                    + [HTTPField(name: "Location", value: url), HTTPField(name: "Cache-Control", value: "private, no-store")]
                return Response(status: .found, headers: headers)
            }
            let (fd, offset) = try await blobs.openForReading(key, sha256: content.sha256, range: range, of: content.size)
            response.body = .file(FileRegion(fd: fd, offset: offset, length: range.upperBound - range.lowerBound))
            return response
        }
    }
}

/// A stored file as GET answers it (a panorama's content, a world map): the bytes, whole or a
/// range (RFC 9110 §14), with the digest as ETag.
extension StoredContent {
    package enum Answer {
        /// Send this range of the file with this head.
        case bytes(Range<Int64>, Response)
        /// Answer without the file (304, 416).
        case response(Response)
    }

    /// Whether `If-None-Match` names `etag` (RFC 9110 §13.1.2).
    package static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch == "*" || ifNoneMatch.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag }
    }

    /// Whether a `Range` is to be honoured under `If-Range` (RFC 9110 §13.1.5): only when the
    /// validator is this representation's strong ETag. A date, a weak tag or another tag means
    /// the client holds other bytes, and gets all of these (200), never a mix of two.
    package static func rangeApplies(ifRange: String?, _ etag: String) -> Bool {
        guard let ifRange else { return true }
        return ifRange.trimmingCharacters(in: .whitespaces) == etag
    }

    package func answer(range: String?, ifNoneMatch: String?, ifRange: String?) -> Answer {
        let etag = "\"\(sha256)\""
        var headers = [HTTPField(name: "ETag", value: etag), HTTPField(name: "Accept-Ranges", value: "bytes")]
        if Self.matches(ifNoneMatch, etag) {
            return .response(Response(status: .notModified, headers: headers))
        }
        switch ByteRange.parse(Self.rangeApplies(ifRange: ifRange, etag) ? range : nil, size: size) {
        case .whole:
            if let bytes = ByteEncoding.bytes(fromHex: sha256) {
                headers.append(HTTPField(name: "Repr-Digest", value: "sha-256=:\(ByteEncoding.base64(bytes)):"))
            }
            return .bytes(0..<size, Response(status: .ok, contentType: contentType, headers: headers))
        case .part(let part):
            headers.append(HTTPField(name: "Content-Range", value: "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(size)"))
            return .bytes(part, Response(status: .partialContent, contentType: contentType, headers: headers))
        case .unsatisfiable:
            var error = ServiceError(.rangeNotSatisfiable, "the range is outside the \(size) bytes").httpError
            error.headers.append(HTTPField(name: "Content-Range", value: "bytes */\(size)"))
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

extension Response {
    /// A logo's JPEG, revalidated by its time (a 304 when unchanged).
    package static func logo(_ jpeg: [UInt8], updatedAt: String, for request: Request) -> Response {
        revalidated(jpeg, contentType: "image/jpeg", tag: updatedAt, for: request)
    }

    /// A floor plan drawn, revalidated by what it shows, named for a download.
    package static func floorPlan(_ plan: FloorPlanMade, for request: Request) -> Response {
        revalidated(plan.bytes, contentType: plan.mediaType, tag: plan.tag, for: request,
                    headers: [HTTPField(name: "Content-Disposition", value: "inline; filename=\"\(plan.fileName)\"")])
    }

    /// Bytes made by the server, private to their asker and asked again each time (a 304 while `tag` is the same).
    private static func revalidated(_ bytes: [UInt8], contentType: String, tag: String, for request: Request, headers extra: [HTTPField] = []) -> Response {
        let etag = "\"" + tag + "\""
        let headers = [HTTPField(name: "ETag", value: etag), HTTPField(name: "Cache-Control", value: "private, no-cache")]
        if StoredContent.matches(request.headers["if-none-match"], etag) { return Response(status: .notModified, headers: headers) }
        return Response(status: .ok, contentType: contentType, headers: headers + extra, body: .bytes(bytes))
    }
}
