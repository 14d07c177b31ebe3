import NTHashing
import NTAPIModel
import NTHTTPCore

/// A tenant's webhook endpoints (docs/webhooks.md): made with a secret shown once, listed,
/// removed, their delivery log read, their events sent again.
enum WebhookRoutes {
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext, key: SecretBox) {
        let config = context.config

        table.add(.post, "/v1/webhooks", .tenant(nil), bodyLimit: Int64(config.maxJsonBodyBytes)) { request in
            let tenant = request.tenant
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try WebhookInput.parse(body, maxDepth: config.maxJsonDepth) }
            // A literal address is checked now; a name, at each delivery (what it resolves to may change).
            if !config.webhookAllowPrivateTargets, let address = AddressRange.bytes(input.target.host), !AddressRange.isPublic(address) {
                throw ServiceError.badRequest("url is a loopback, private or link-local address (webhookAllowPrivateTargets is off)")
            }
            let secretKey = randomBytes(24)
            let sealed = key.seal(secretKey, nonce: randomBytes(12))
            let id = Identifier.make()
            guard var made = try await context.write({
                try await WebhookStore.create($0, tenant, id: id, url: input.target.url, events: input.events, sealedSecret: sealed,
                                              maxPerTenant: config.maxWebhooksPerTenant, at: context.clock.now())
            }) else {
                throw ServiceError.conflict("a tenant has at most \(config.maxWebhooksPerTenant) webhook endpoints (maxWebhooksPerTenant)")
            }
            made.secret = StandardWebhooks.secret(secretKey)
            return .document(.created, made)
        }

        table.add(.get, "/v1/webhooks", .tenant(nil)) { request in
            let tenant = request.tenant
            return .document(.ok, WholeList(items: try await context.readOne { try await WebhookStore.list($0, tenant) }))
        }

        table.add(.get, "/v1/webhooks/{webhookId}", .tenant(nil)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("webhookId"))
            guard let webhook = try await context.readOne({ try await WebhookStore.get($0, tenant, id) }) else { throw ServiceError.notFound("webhook", id) }
            return .document(.ok, webhook)
        }

        table.add(.delete, "/v1/webhooks/{webhookId}", .tenant(nil)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("webhookId"))
            guard try await context.write({ try await WebhookStore.delete($0, tenant, id) }) else { throw ServiceError.notFound("webhook", id) }
            return Response(status: .noContent)
        }

        table.add(.get, "/v1/webhooks/{webhookId}/deliveries", .tenant(nil)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("webhookId"))
            guard let deliveries = try await context.read({ db -> [DeliveryRecord]? in
                guard try await WebhookStore.get(db, tenant, id) != nil else { return nil }
                return try await WebhookStore.deliveries(db, tenant, id)
            }) else { throw ServiceError.notFound("webhook", id) }
            return .document(.ok, WholeList(items: deliveries))
        }

        table.add(.post, "/v1/webhooks/{webhookId}/redeliver", .tenant(nil), bodyLimit: Int64(config.maxJsonBodyBytes)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("webhookId"))
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try RedeliverInput.parse(body, maxDepth: config.maxJsonDepth) }
            let (rewind, webhook) = try await context.write { db -> (WebhookStore.Rewind, WebhookDocument?) in
                let rewind = try await WebhookStore.rewind(db, tenant, id, after: input.after)
                return (rewind, rewind == .rewound ? try await WebhookStore.get(db, tenant, id) : nil)
            }
            switch (rewind, webhook) {
            case (.pastLastEvent(let last), _):
                throw ServiceError.badRequest("after is past the last event of the feed, \(last)")
            case (.rewound, let webhook?):
                return .document(.ok, webhook)
            default:
                throw ServiceError.notFound("webhook", id)
            }
        }
    }
}
