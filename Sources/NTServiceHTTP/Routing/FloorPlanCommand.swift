import NTAPIModel
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
        case .floor(let floorId, _): .floor(floorId)
        }
    }

    /// A floor's formats, by suffix and by media type; SVG when `Accept` takes anything.
    package static let floorFormats: [(suffix: String, mediaType: String)] = [("svg", "image/svg+xml"), ("pdf", "application/pdf"), ("png", "image/png")]

    /// The parse of a floor's route: `suffix` the path's, or nil to read `Accept`; the floor's
    /// id in path parameter `parameter`.
    package static func floor(suffix: String?, parameter: String = "floorId") -> @Sendable (Request) throws -> GetFloorPlan {
        { request in
            let floorId = try request.uuid(parameter)
            let chosen = try suffix ?? negotiated(request.headers["accept"], among: floorFormats.map(\.mediaType)).flatMap { type in
                floorFormats.first { $0.mediaType == type }?.suffix
            } ?? "svg"
            let width = try request.queryParameter("width").map { text throws(ServiceError) -> Int in
                guard chosen == "png" else { throw ServiceError.badRequest("width is a PNG's: ask for floor-plan.png") }
                guard let width = Int(text) else { throw ServiceError.badRequest("width must be a whole number of pixels") }
                return width
            }
            let format: FloorPlanAsk.Format = switch chosen {
            case "pdf": .pdf
            case "png": .png(width: width)
            default: .svg
            }
            return GetFloorPlan(ask: .floor(floorId, format), branded: try branded(request))
        }
    }

    /// The parse of a home's route: a PDF.
    package static let home: @Sendable (Request) throws -> GetFloorPlan = { request in
        let propertyId = try request.uuid("propertyId")
        _ = try negotiated(request.headers["accept"], among: ["application/pdf"])
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
    static func negotiated(_ accept: String?, among offered: [String]) throws(ServiceError) -> String? {
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
            if let exact = offered.first(where: { $0 == range.type }) { return exact }
            if range.type.hasSuffix("/*"), let family = offered.first(where: { $0.hasPrefix(range.type.dropLast()) }) { return family }
        }
        throw ServiceError(.notAcceptable, "a floor plan is \(offered.joined(separator: ", ")); Accept takes none of them")
    }
}
