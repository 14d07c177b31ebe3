import NTAPIModel
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// Everything a viewer page shows, read in one transaction.
struct TourPageData: Sendable {
    var tour: TourDocument
    var branding: BrandingDocument
    /// The property's sync status: on its own page.
    var status: ServerStatusDocument?
    /// The newest share links: on its own page, signed in.
    var shares: [ShareDocument]?
}

/// What the viewer's pages read of a tenant's tours. Knows no HTTP.
package struct ViewerReads: Sendable {
    package let records: Records
    package let clock: any ServiceClock
    /// Each listed link's URL again.
    package let shareSecrets: ShareSecrets

    package init(records: Records, clock: any ServiceClock, shareSecrets: ShareSecrets) {
        self.records = records
        self.clock = clock
        self.shareSecrets = shareSecrets
    }

    /// The tour that `part` (a floor, room or panorama; nil: the property `propertyId` itself)
    /// is of, nil when there is none or, through a share link (`within`), it is not that
    /// link's property. `propertyPage`: with the status, and (`listingShares`) the newest links.
    func page(_ tenant: Int64, part: TourPart?, propertyId: String, within: String?, propertyPage: Bool, listingShares: Bool) async throws -> TourPageData? {
        let (now, secrets) = (clock.now(), shareSecrets)
        return try await records.read { db -> TourPageData? in
            let owner = if let part { try await ViewerStore.propertyId(db, tenant, of: part) } else { propertyId }
            guard let owner, within == nil || within == owner,
                  var tour = try await TourStore.tour(db, tenant, propertyId: owner) else { return nil }
            let branding = try await BrandingStore.branding(db, tenant)
            // Floors without a name of their own are named as the tenant names floors.
            for index in tour.floors.indices where tour.floors[index].floor.name == nil {
                tour.floors[index].floor.name = branding.floorNames.title(tour.floors[index].floor.number)
            }
            guard propertyPage else { return TourPageData(tour: tour, branding: branding) }
            return TourPageData(tour: tour, branding: branding, status: try await TourStore.status(db, tenant, owner),
                                // The page lists the newest links; the API pages through them all.
                                shares: listingShares ? try await ViewerStore.shares(db, tenant, tourId: tour.tourId, limit: 50, after: nil, secretOf: secrets.secret(of:), at: now)?.page : nil)
        }
    }

    /// A page of the tenant's properties whose name contains `query`, with their counts.
    func propertyList(_ tenant: Int64, query: String, page: Int, pageSize: Int) async throws -> ([PropertySummary], hasNext: Bool) {
        try await records.read { try await ViewerStore.propertyList($0, tenant, query: query, page: page, pageSize: pageSize) }
    }
}
