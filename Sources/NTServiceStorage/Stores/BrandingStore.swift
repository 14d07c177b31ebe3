import NTAPIModel
import NTLogging
import NTServiceModel
import NTSQLiteDB

/// The SQL of a tenant's branding (migration 0021 / PostgreSQL 0018): one row per tenant that
/// set any, its logo a JPEG made again from the uploaded image's pixels.
package enum BrandingStore {
    /// The tenant's branding; the defaults when it set none.
    package static func branding(_ db: any SQLConnection, _ tenant: Int64) async throws -> BrandingDocument {
        guard let row = try await db.first("""
            SELECT name, accent, contact, floor_names, units, logo_width, logo_height, updated_at FROM brandings WHERE tenant_id = ?
            """, tenant) else { return BrandingDocument() }
        let logo: BrandingDocument.Logo?
        if let width = try row.decodeIfPresent("logo_width", as: Int.self), let height = try row.decodeIfPresent("logo_height", as: Int.self) {
            logo = BrandingDocument.Logo(width: width, height: height)
        } else {
            logo = nil
        }
        let contact = ((try? JSONReader.parse(try row.decode("contact", as: String.self)))?.array ?? []).compactMap(\.string)
        return BrandingDocument(name: try row.decodeIfPresent("name", as: String.self), accent: try row.decodeIfPresent("accent", as: String.self),
                                contact: contact, floorNames: FloorNaming(rawValue: try row.decode("floor_names", as: String.self)) ?? .uk,
                                units: try row.decodeIfPresent("units", as: String.self).flatMap(MeasureUnits.init(rawValue:)), logo: logo, updatedAt: try row.decode("updated_at", as: String.self))
    }

    /// Sets everything but the logo, which stays.
    package static func put(_ db: any SQLConnection, _ tenant: Int64, _ input: BrandingInput, at now: WallClockTime) async throws -> BrandingDocument {
        var contact = JSONWriter()
        contact.array(input.contact) { $0.string($1) }
        try await db.run("""
            INSERT INTO brandings (tenant_id, name, accent, contact, floor_names, units, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (tenant_id) DO UPDATE SET name = excluded.name, accent = excluded.accent, contact = excluded.contact,
                floor_names = excluded.floor_names, units = excluded.units, updated_at = excluded.updated_at
            """, tenant, input.name, input.accent, String(decoding: contact.bytes, as: UTF8.self), input.floorNames.rawValue, input.units?.rawValue,
                Timestamp.text(now))
        return try await branding(db, tenant)
    }

    /// Sets the logo (nil: removes it); the rest stays.
    package static func putLogo(_ db: any SQLConnection, _ tenant: Int64, _ logo: (jpeg: [UInt8], width: Int, height: Int)?, at now: WallClockTime) async throws -> BrandingDocument {
        try await db.run("""
            INSERT INTO brandings (tenant_id, logo, logo_width, logo_height, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (tenant_id) DO UPDATE SET logo = excluded.logo, logo_width = excluded.logo_width, logo_height = excluded.logo_height,
                updated_at = excluded.updated_at
            """, tenant, logo.map { Blob($0.jpeg) }, logo.map { Int64($0.width) }, logo.map { Int64($0.height) }, Timestamp.text(now))
        return try await branding(db, tenant)
    }

    /// The logo's JPEG and when it was set (its validator), nil when there is none.
    package static func logo(_ db: any SQLConnection, _ tenant: Int64) async throws -> (jpeg: [UInt8], updatedAt: String)? {
        guard let row = try await db.first("SELECT logo, updated_at FROM brandings WHERE tenant_id = ? AND logo IS NOT NULL", tenant) else { return nil }
        return (try row.decode("logo", as: [UInt8].self), try row.decode("updated_at", as: String.self))
    }
}
