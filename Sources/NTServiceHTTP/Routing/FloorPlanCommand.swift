import NTAPIModel
import NTFloorPlans
import NTHTTPCore
import NTServiceModel
import NTTourUseCases

/// A floor plan asked for (`GET /v1/floors/{floorId}/floor-plan[.svg|.pdf|.png]`,
/// `GET /v1/properties/{propertyId}/floor-plan[.pdf]`): the format by the path's suffix, else
/// by `Accept`; `?branding=unbranded` for listing sites; a PNG's `?width=`.
package struct GetFloorPlan: Command {
    package let ask: FloorPlanAsk
    package let branded: Bool
    package var target: AccessTarget? {
        switch ask {
        case .home(let propertyId): .property(propertyId)
        case .floor(let floorId, _, _): .floor(floorId)
        }
    }

    /// The parse of a floor's route: `suffix` the path's, or nil to read `Accept` (SVG when it
    /// takes anything); the floor's id in path parameter `parameter`.
    package static func floor(suffix: FloorPlanFormat?, parameter: String = "floorId") -> @Sendable (Request) throws -> GetFloorPlan {
        { request in
            let floorId = try request.uuid(parameter)
            let format = try suffix ?? negotiated(request.headers["accept"], among: FloorPlanFormat.allCases) ?? .svg
            let width = try request.queryParameter("width").map { text throws(ServiceError) -> Int in
                guard format == .png else { throw ServiceError.badRequest("width is a PNG's: ask for floor-plan.png") }
                guard let width = Int(text) else { throw ServiceError.badRequest("width must be a whole number of pixels") }
                return width
            }
            return GetFloorPlan(ask: .floor(floorId, format, width: width), branded: try branded(request))
        }
    }

    /// The parse of a home's route: a PDF.
    package static let home: @Sendable (Request) throws -> GetFloorPlan = { request in
        let propertyId = try request.uuid("propertyId")
        _ = try negotiated(request.headers["accept"], among: [.pdf])
        return GetFloorPlan(ask: .home(propertyId: propertyId), branded: try branded(request))
    }

    /// `?branding=branded` (the default) or `unbranded`.
    package static func branded(_ request: Request) throws -> Bool {
        switch try request.queryParameter("branding") {
        case nil, "branded": true
        case "unbranded": false
        case let other?: throw ServiceError.badRequest("branding must be branded or unbranded, not \"\(other.prefix(40))\"")
        }
    }

    /// The first of `offered` that `accept` takes, by its quality and then its order; nil when
    /// it takes anything (or says nothing); 406 when it takes none.
    static func negotiated(_ accept: String?, among offered: [FloorPlanFormat]) throws(ServiceError) -> FloorPlanFormat? {
        guard let accept, !accept.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        var ranges: [(type: String, quality: Double, order: Int)] = []
        for (order, part) in accept.split(separator: ",").enumerated() {
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = fields.first, !type.isEmpty else { continue }
            let quality = fields.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if quality > 0 { ranges.append((type, quality, order)) }
        }
        for range in ranges.sorted(by: { ($0.quality, -$0.order) > ($1.quality, -$1.order) }) {
            if range.type == "*/*" { return nil }
            if let exact = offered.first(where: { $0.mediaType == range.type }) { return exact }
            if range.type.hasSuffix("/*"), let family = offered.first(where: { $0.mediaType.hasPrefix(range.type.dropLast()) }) { return family }
        }
        throw ServiceError(.notAcceptable, "a floor plan is \(offered.map(\.mediaType).joined(separator: ", ")); Accept takes none of them")
    }
}
