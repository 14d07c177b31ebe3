import NTFloorPlans
import NTHTTPCore
import NTServiceHTTP
import NTTourUseCases

/// Published floor plans (docs/api.md "Floor plans").
enum FloorPlanRoutes {
    static func add(to api: inout APIRoutes, plans: FloorPlans) {
        let answer: @Sendable (GetFloorPlan, APIPrincipal, Request) async throws -> Response = { command, principal, request in
            .floorPlan(try await plans.plan(principal.tenant, command.ask, branded: command.branded), for: request)
        }
        api.add(.get, "/v1/floors/{floorId}/floor-plan", .scoped(.read), parse: GetFloorPlan.floor(suffix: nil), answer)
        for format in FloorPlanFormat.allCases {
            api.add(.get, "/v1/floors/{floorId}/floor-plan.\(format.rawValue)", .scoped(.read), parse: GetFloorPlan.floor(suffix: format), answer)
        }
        api.add(.get, "/v1/properties/{propertyId}/floor-plan", .scoped(.read), parse: GetFloorPlan.home, answer)
        api.add(.get, "/v1/properties/{propertyId}/floor-plan.pdf", .scoped(.read), parse: GetFloorPlan.home, answer)
    }
}
