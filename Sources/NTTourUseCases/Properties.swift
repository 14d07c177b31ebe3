import NTAPIModel
import NTServiceModel
import NTServiceStorage

/// Properties: made, changed, read, and removed with all they hold. Knows no HTTP.
package struct Properties: Sendable {
    package let records: Records
    package let blobs: any BlobStore
    package let clock: any ServiceClock
    package let panoramas: Panoramas

    package init(records: Records, blobs: any BlobStore, clock: any ServiceClock, panoramas: Panoramas) {
        self.records = records
        self.blobs = blobs
        self.clock = clock
        self.panoramas = panoramas
    }

    /// Creates or changes a property. Through a grant (`joining`), a property it creates joins
    /// it, and one it cannot see is not its to change: decided in the transaction that would
    /// change it.
    package func put(_ tenant: Int64, _ id: String, _ input: PropertyInput, joining grant: GrantAccess?) async throws -> (PropertyRecord, created: Bool) {
        let now = clock.now()
        return try await records.write { db in
            let put = try await TourStore.putProperty(db, tenant, id, input, at: now)
            if let grant, !grant.propertyIds.contains(id) {
                guard put.created else { throw ServiceError.notFound("property", id) }
                try await GrantStore.join(db, tenant, grant: grant.id, property: id)
            }
            return put
        }
    }

    /// A page of the tenant's properties (a grant's: those it holds), and the cursor of the next.
    package func list(_ tenant: Int64, grant: String?, limit: Int, after: String?) async throws -> ([PropertyRecord], next: String?) {
        try await records.readOne { try await TourStore.properties($0, tenant, grant: grant, limit: limit, after: after) }
    }

    package func property(_ tenant: Int64, _ id: String) async throws -> PropertyRecord {
        guard let property = try await records.readOne({ try await TourStore.property($0, tenant, id) }) else { throw ServiceError.notFound("property", id) }
        return property
    }

    /// The property's sync status, as JSON.
    package func status(_ tenant: Int64, _ id: String) async throws -> [UInt8] {
        guard let status = try await records.read({ db in try await TourStore.status(db, tenant, id).map(\.jsonBytes) }) else {
            throw ServiceError.notFound("property", id)
        }
        return status
    }

    /// The tour (by its id), as JSON.
    package func tour(_ tenant: Int64, tourId: String) async throws -> [UInt8] {
        guard let tour = try await records.read({ db in try await TourStore.tour(db, tenant, tourId: tourId).map(\.jsonBytes) }) else {
            throw ServiceError.notFound("tour", tourId)
        }
        return tour
    }

    /// Removes a property (its floors, panoramas, uploads and share links), then its files
    /// after the commit: a crash before leaves files with no row, swept at start-up.
    package func delete(_ tenant: Int64, _ id: String) async throws {
        let now = clock.now()
        guard let files = try await records.write({ try await TourStore.deleteProperty($0, tenant, id, at: now) }) else { throw ServiceError.notFound("property", id) }
        await blobs.remove(files.filter { $0.kind != .panorama })
        await panoramas.removeFiles(files.filter { $0.kind == .panorama })
    }
}
