import NTAPIModel
import NTImagePreviews
import NTServiceModel
import NTServiceStorage

/// A tenant's branding on its share links: its name, accent, contact and logo. Knows no HTTP.
package struct Branding: Sendable {
    package let records: Records
    package let clock: any ServiceClock
    package let images: PanoramaImages
    /// The widest a logo is kept (`logoWidth`).
    package let logoWidth: Int

    package init(records: Records, clock: any ServiceClock, images: PanoramaImages, logoWidth: Int) {
        self.records = records
        self.clock = clock
        self.images = images
        self.logoWidth = logoWidth
    }

    package func branding(_ tenant: Int64) async throws -> BrandingDocument {
        try await records.readOne { try await BrandingStore.branding($0, tenant) }
    }

    package func put(_ tenant: Int64, _ input: BrandingInput) async throws -> BrandingDocument {
        let now = clock.now()
        return try await records.write { try await BrandingStore.put($0, tenant, input, at: now) }
    }

    /// The logo made again from the image's pixels, `logoWidth` wide at most: none of the
    /// file's metadata stays.
    package func putLogo(_ tenant: Int64, _ bytes: [UInt8], _ format: ImageFormat) async throws -> BrandingDocument {
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

    package func removeLogo(_ tenant: Int64) async throws {
        let now = clock.now()
        _ = try await records.write { try await BrandingStore.putLogo($0, tenant, nil, at: now) }
    }

    /// The logo's JPEG and when it was set; nil when the tenant has none.
    package func logo(_ tenant: Int64) async throws -> (jpeg: [UInt8], updatedAt: String)? {
        try await records.readOne { try await BrandingStore.logo($0, tenant) }
    }
}
