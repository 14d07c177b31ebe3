import NTAPIModel
import NTImagePreviews

/// A tenant's branding on its share links: its name, accent, contact and logo. Knows no HTTP.
struct Branding: Sendable {
    let records: Records
    let clock: any ServiceClock
    let images: PanoramaImages
    /// The widest a logo is kept (`logoWidth`).
    let logoWidth: Int

    func branding(_ tenant: Int64) async throws -> BrandingDocument {
        try await records.readOne { try await BrandingStore.branding($0, tenant) }
    }

    func put(_ tenant: Int64, _ input: BrandingInput) async throws -> BrandingDocument {
        let now = clock.now()
        return try await records.write { try await BrandingStore.put($0, tenant, input, at: now) }
    }

    /// The logo made again from the image's pixels, `logoWidth` wide at most: none of the
    /// file's metadata stays.
    func putLogo(_ tenant: Int64, _ bytes: [UInt8], _ format: ImageFormat) async throws -> BrandingDocument {
        let jpeg: [UInt8]
        do {
            jpeg = try await images.logo(bytes, format, width: logoWidth)
        } catch let error as PreviewError {
            throw ServiceError.badRequest("the logo cannot be used: \(error.message)")
        }
        guard let size = JPEGPreview.dimensions(of: jpeg) else { throw ServiceError(.internal, "the logo was made without a size") }
        let now = clock.now()
        return try await records.write { try await BrandingStore.putLogo($0, tenant, (jpeg, size.width, size.height), at: now) }
    }

    func removeLogo(_ tenant: Int64) async throws {
        let now = clock.now()
        _ = try await records.write { try await BrandingStore.putLogo($0, tenant, nil, at: now) }
    }

    /// The logo's JPEG and when it was set; nil when the tenant has none.
    func logo(_ tenant: Int64) async throws -> (jpeg: [UInt8], updatedAt: String)? {
        try await records.readOne { try await BrandingStore.logo($0, tenant) }
    }
}
