import NTAPIModel
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage

/// A tenant's webhook endpoints (docs/webhooks.md): made with a secret shown once, listed,
/// removed, their delivery log read, their events sent again.
package enum WebhookRoutes {
    package static func add(to api: inout APIRoutes, settings: APISettings, endpoints: WebhookEndpoints) {
        let maxJsonDepth = settings.maxJsonDepth

        api.add(.post, "/v1/webhooks", .tenant, bodyLimit: Int64(settings.maxJsonBodyBytes), parse: Addressed.nothing) { _, principal, request in
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try WebhookInput.parse(body, maxDepth: maxJsonDepth) }
            return .document(.created, try await endpoints.create(principal.tenant, input))
        }

        api.add(.get, "/v1/webhooks", .tenant, parse: Addressed.nothing) { _, principal, _ in
            .document(.ok, WholeList(items: try await endpoints.list(principal.tenant)))
        }

        api.add(.get, "/v1/webhooks/{webhookId}", .tenant, parse: Addressed.nothing) { _, principal, request in
            .document(.ok, try await endpoints.endpoint(principal.tenant, try request.uuid("webhookId")))
        }

        api.add(.delete, "/v1/webhooks/{webhookId}", .tenant, parse: Addressed.nothing) { _, principal, request in
            try await endpoints.delete(principal.tenant, try request.uuid("webhookId"))
            return Response(status: .noContent)
        }

        api.add(.get, "/v1/webhooks/{webhookId}/deliveries", .tenant, parse: Addressed.nothing) { _, principal, request in
            .document(.ok, WholeList(items: try await endpoints.deliveries(principal.tenant, try request.uuid("webhookId"))))
        }

        api.add(.post, "/v1/webhooks/{webhookId}/redeliver", .tenant, bodyLimit: Int64(settings.maxJsonBodyBytes), parse: Addressed.nothing) { _, principal, request in
            let id = try request.uuid("webhookId")
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in try RedeliverInput.parse(body, maxDepth: maxJsonDepth) }
            return .document(.ok, try await endpoints.redeliver(principal.tenant, id, after: input.after))
        }
    }
}
