import NTHashing
import NTAPIModel
import NTServiceModel
import NTServiceStorage

/// A share link's secret, a function of its id under a key derived from the deployment's
/// (docs/security.md "A live link can be copied again"): the row keeps only the secret's hash,
/// as a token's, yet every daemon can give the tenant a live link's URL again.
package struct ShareSecrets: Sendable {
    private let key: [UInt8]

    package init(key: SecretBox) {
        self.key = key.derivedKey("toursd share link v1")
    }

    package func secret(of shareId: String) -> String {
        ByteEncoding.base64URL(hmacSHA256(key: key, Array(shareId.utf8)))
    }
}

/// Share links of tours: made, listed (each live link's URL again), revoked, opened by their
/// secret, and the visits they get counted. Knows no HTTP.
package struct Shares: Sendable {
    package let records: Records
    package let clock: any ServiceClock
    package let settings: ShareSettings
    package let secrets: ShareSecrets

    package init(records: Records, clock: any ServiceClock, settings: ShareSettings, secrets: ShareSecrets) {
        self.records = records
        self.clock = clock
        self.settings = settings
        self.secrets = secrets
    }

    /// A link to the tour; nil when the tenant has no such tour.
    package func create(_ tenant: Int64, tourId: String, _ input: ShareInput) async throws -> ShareDocument? {
        let (now, maxLive) = (clock.now(), settings.maxPerTour)
        let secrets = secrets
        return try await records.write { try await ViewerStore.createShare($0, tenant, tourId: tourId, input, secretOf: secrets.secret(of:), maxLive: maxLive, at: now) }
    }

    /// A link to the property's tour; nil when the tenant has no such property.
    package func create(_ tenant: Int64, propertyId: String, _ input: ShareInput) async throws -> ShareDocument? {
        let (now, maxLive, secrets) = (clock.now(), settings.maxPerTour, secrets)
        return try await records.write { db -> ShareDocument? in
            guard let property = try await TourStore.property(db, tenant, propertyId) else { return nil }
            return try await ViewerStore.createShare(db, tenant, tourId: property.tourId, input, secretOf: secrets.secret(of:), maxLive: maxLive, at: now)
        }
    }

    /// A page of the tour's live links, newest first; nil when the tenant has no such tour.
    package func list(_ tenant: Int64, tourId: String, limit: Int, after: String?) async throws -> (page: [ShareDocument], more: Bool)? {
        let (now, secrets) = (clock.now(), secrets)
        return try await records.read { try await ViewerStore.shares($0, tenant, tourId: tourId, limit: limit, after: after, secretOf: secrets.secret(of:), at: now) }
    }

    /// Revokes a link: the property it showed; nil when the tenant has no such link.
    package func revoke(_ tenant: Int64, _ id: String) async throws -> String? {
        try await records.write { try await ViewerStore.revokeShare($0, tenant, id: id) }
    }

    package func stats(_ tenant: Int64, _ id: String) async throws -> ShareStatsDocument? {
        try await records.read { try await ShareVisitStore.stats($0, tenant, shareId: id) }
    }

    /// What an unexpired, unrevoked secret opens.
    package func open(secret: String) async throws -> OpenedShare? {
        let now = clock.now()
        return try await records.readOne { try await ViewerStore.share($0, secret: secret, at: now) }
    }

    /// An opening of the link: its visit's id (nil: the day's visits are counted already).
    package func recordView(_ share: OpenedShare, by client: VisitorClient) async throws -> String? {
        let limits = VisitLimits(visitsPerDay: settings.visitsPerDay, visitMaxSeconds: settings.visitMaxSeconds, eventSeconds: settings.eventSeconds)
        let now = clock.now()
        return try await records.write { try await ShareVisitStore.recordView($0, share, client, limits: limits, at: now) }
    }

    /// A beacon of the viewer: how long a panorama has been shown in a visit.
    package func recordBeacon(_ share: OpenedShare, visit: String, _ beacon: VisitBeacon) async throws -> BeaconOutcome {
        let (maxSeconds, now) = (settings.visitMaxSeconds, clock.now())
        return try await records.write { try await ShareVisitStore.recordBeacon($0, share, visit: visit, beacon, visitMaxSeconds: maxSeconds, at: now) }
    }
}
