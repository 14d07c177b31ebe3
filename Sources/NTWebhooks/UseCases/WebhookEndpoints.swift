import NTAPIModel
import NTHashing
import NTServiceModel
import NTServiceStorage

/// A tenant's webhook endpoints (docs/webhooks.md): made with a secret shown once, listed,
/// removed, their delivery log read, their events sent again. Knows no HTTP.
package struct WebhookEndpoints: Sendable {
    package let records: Records
    package let clock: any ServiceClock
    /// Seals each endpoint's secret at rest (the deployment's key).
    package let key: SecretBox
    package let maxPerTenant: Int
    package let allowPrivateTargets: Bool

    package init(records: Records, clock: any ServiceClock, key: SecretBox, maxPerTenant: Int, allowPrivateTargets: Bool) {
        self.records = records
        self.clock = clock
        self.key = key
        self.maxPerTenant = maxPerTenant
        self.allowPrivateTargets = allowPrivateTargets
    }

    /// An endpoint, its secret shown this once.
    func create(_ tenant: Int64, _ input: WebhookInput) async throws -> WebhookDocument {
        // A literal address is checked now; a name, at each delivery (what it resolves to may change).
        if !allowPrivateTargets, let address = AddressRange.bytes(input.target.host), !AddressRange.isPublic(address) {
            throw ServiceError.badRequest("url is a loopback, private or link-local address (webhookAllowPrivateTargets is off)")
        }
        let secretKey = randomBytes(24)
        let sealed = key.seal(secretKey, nonce: randomBytes(12))
        let (id, now, maxPerTenant) = (Identifier.make(), clock.now(), maxPerTenant)
        guard var made = try await records.write({
            try await WebhookStore.create($0, tenant, id: id, url: input.target.url, events: input.events, sealedSecret: sealed, maxPerTenant: maxPerTenant, at: now)
        }) else {
            throw ServiceError.conflict("a tenant has at most \(maxPerTenant) webhook endpoints (maxWebhooksPerTenant)")
        }
        made.secret = StandardWebhooks.secret(secretKey)
        return made
    }

    func list(_ tenant: Int64) async throws -> [WebhookDocument] {
        try await records.readOne { try await WebhookStore.list($0, tenant) }
    }

    func endpoint(_ tenant: Int64, _ id: String) async throws -> WebhookDocument {
        guard let webhook = try await records.readOne({ try await WebhookStore.get($0, tenant, id) }) else { throw ServiceError.notFound("webhook", id) }
        return webhook
    }

    func delete(_ tenant: Int64, _ id: String) async throws {
        guard try await records.write({ try await WebhookStore.delete($0, tenant, id) }) else { throw ServiceError.notFound("webhook", id) }
    }

    /// The endpoint's delivery log, newest first.
    func deliveries(_ tenant: Int64, _ id: String) async throws -> [DeliveryRecord] {
        guard let deliveries = try await records.read({ db -> [DeliveryRecord]? in
            guard try await WebhookStore.get(db, tenant, id) != nil else { return nil }
            return try await WebhookStore.deliveries(db, tenant, id)
        }) else { throw ServiceError.notFound("webhook", id) }
        return deliveries
    }

    /// Sends the endpoint the events after `after` again (its cursor moved back).
    func redeliver(_ tenant: Int64, _ id: String, after: Int64) async throws -> WebhookDocument {
        let (rewind, webhook) = try await records.write { db -> (WebhookRewind, WebhookDocument?) in
            let rewind = try await WebhookStore.rewind(db, tenant, id, after: after)
            return (rewind, rewind == .rewound ? try await WebhookStore.get(db, tenant, id) : nil)
        }
        switch (rewind, webhook) {
        case (.pastLastEvent(let last), _):
            throw ServiceError.badRequest("after is past the last event of the feed, \(last)")
        case (.rewound, let webhook?):
            return webhook
        default:
            throw ServiceError.notFound("webhook", id)
        }
    }
}
