import NTAPIModel
import NTHTTPCore

/// Share links of tours (docs/api.md "Sharing a tour"). The pages a link opens are the viewer's.
enum ShareRoutes {
    static func add(to table: inout GuardedRoutes, _ context: ServiceContext) {
        let allowed = context.config.shareMinSeconds...context.config.shareMaxSeconds

        table.add(.post, "/v1/tours/{tourId}/shares", .tenant(.tour), bodyLimit: Int64(context.config.maxJsonBodyBytes)) { request in
            let (tenant, tourId) = (request.tenant, try request.uuid("tourId"))
            let body = try await request.body.collect(upTo: request.bodyLimit)
            let input = try ServiceError.parsing { () throws(InvalidDocument) in
                try ShareInput.parse(body, allowed: allowed, defaultSeconds: context.config.shareLifetime,
                                     maxOrigins: context.config.maxFrameAncestorsPerShare, maxDepth: context.config.maxJsonDepth)
            }
            let maxLive = context.config.maxSharesPerTour
            guard let share = try await context.write({
                try await ViewerStore.createShare($0, tenant, tourId: tourId, input, maxLive: maxLive, at: context.clock.now())
            }) else {
                throw ServiceError.notFound("tour", tourId)
            }
            return .document(.created, share)
        }

        table.add(.get, "/v1/tours/{tourId}/shares", .tenant(.tour)) { request in
            let (tenant, tourId) = (request.tenant, try request.uuid("tourId"))
            let (limit, after) = try request.pageQuery()
            guard let (page, more) = try await context.read({ try await ViewerStore.shares($0, tenant, tourId: tourId, limit: limit, after: after, at: context.clock.now()) }) else {
                throw ServiceError.notFound("tour", tourId)
            }
            return .document(.ok, Page(items: page, next: more ? page.last?.id : nil))
        }

        table.add(.get, "/v1/shares/{shareId}/stats", .tenant(nil)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("shareId"))
            guard let stats = try await context.read({ try await ShareVisitStore.stats($0, tenant, shareId: id) }) else {
                throw ServiceError.notFound("share", id)
            }
            return .document(.ok, stats)
        }

        table.add(.delete, "/v1/shares/{shareId}", .tenant(nil)) { request in
            let (tenant, id) = (request.tenant, try request.uuid("shareId"))
            guard try await context.write({ try await ViewerStore.revokeShare($0, tenant, id: id) }) != nil else {
                throw ServiceError.notFound("share", id)
            }
            return Response(status: .noContent)
        }
    }
}

extension ServiceContext {
    /// Removes expired share links with their visits, and the visitor salts of earlier days.
    func sweepShareVisits() async {
        do {
            let removed = try await write { try await ShareVisitStore.sweep($0, at: self.clock.now()) }
            if removed > 0 { logger.info("expired share links removed", ["count": String(removed)]) }
        } catch {
            failed("the share link sweep failed", error)
        }
    }
}
