import NTHashing
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// An upload's URL as its own credential (docs/security.md "Uploads outlive their grant"):
/// `/v1/uploads/{uploadId}/{capability}`, the capability `<tenant>.<MAC>` with a 256-bit
/// HMAC of the tenant and the upload id under a key derived from the daemons' shared key
/// (`webhook.key`). Nothing is stored: every daemon recomputes it, and a creation sent again
/// answers the same URL. It opens that upload's HEAD, PATCH and DELETE and nothing else, so a
/// background upload goes on after the grant that began it expires; a revoked grant ends it.
package struct UploadCapabilities: Sendable {
    private let key: [UInt8]

    package init(key: SecretBox) {
        self.key = key.derivedKey("toursd upload capability v1")
    }

    /// The URL of an upload, the one its creation answers in `Location`.
    func location(_ uploadId: String, tenant: Int64) -> String {
        "/v1/uploads/\(uploadId)/\(tenant).\(mac(uploadId, tenant: tenant))"
    }

    /// The tenant a capability speaks for, when it is the upload's; nil otherwise.
    func tenant(_ capability: String, uploadId: String) -> Int64? {
        let parts = capability.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let tenant = Int64(parts[0]), tenant > 0 else { return nil }
        let expected = Array(mac(uploadId, tenant: tenant).utf8)
        return constantTimeEquals(Array(parts[1].utf8), expected) ? tenant : nil
    }

    private func mac(_ uploadId: String, tenant: Int64) -> String {
        ByteEncoding.base64URL(hmacSHA256(key: key, Array("\(tenant)/\(uploadId)".utf8)))
    }
}

/// The authentication of an upload's capability URL: the capability is checked (404 when it is
/// not the upload's, as for an upload that does not exist), then whether the grant that began
/// the upload was revoked (401); the request speaks for the upload (`UploadTarget`).
package struct UploadCapabilityAuthentication: Sendable {
    package let capabilities: UploadCapabilities
    package let records: Records

    package init(capabilities: UploadCapabilities, records: Records) {
        self.capabilities = capabilities
        self.records = records
    }

    package func authenticate(_ request: Request, _ body: @Sendable (UploadTarget) async throws -> Response) async throws -> Response {
        let uploadId = try request.uuid("uploadId")
        guard let tenant = capabilities.tenant(request.parameter("capability") ?? "", uploadId: uploadId) else {
            throw ServiceError.notFound("upload", uploadId)
        }
        switch try await records.readOne({ try await GrantStore.uploadRevoked($0, tenant, upload: uploadId) }) {
        case nil: throw ServiceError.notFound("upload", uploadId)
        case true?: throw ServiceError.uploadGrantRevoked
        case false?: return try await body(UploadTarget(tenant: tenant, uploadId: uploadId))
        }
    }
}

extension ServiceError {
    /// An upload begun with a grant since revoked: its URL opens nothing, and it takes no more bytes.
    package static let uploadGrantRevoked = ServiceError(.unauthorized, "the grant that began this upload was revoked")

    /// A request refused because a newer one (of this daemon or another) took its upload over:
    /// its client asks the offset again and goes on from there.
    package static func takenOver(_ uploadId: String) -> ServiceError { .conflict("a newer request to upload \(uploadId) took over") }
}
