/// The formats a floor's plan is published in: each its path's suffix (`floor-plan.svg`) and its
/// media type.
public enum FloorPlanFormat: String, CaseIterable, Sendable {
    case pdf, svg, png

    public var mediaType: String {
        switch self {
        case .pdf: "application/pdf"
        case .svg: "image/svg+xml"
        case .png: "image/png"
        }
    }
}

/// A published floor plan's file: a floor's as SVG, PDF or PNG, or the whole home's as a PDF
/// (a cover, then a page per floor).
public enum FloorPlanFile: Equatable, Sendable {
    case floorSVG(index: Int)
    case floorPDF(index: Int)
    case floorPNG(index: Int, width: Int)
    case homePDF

    public var format: FloorPlanFormat {
        switch self {
        case .floorSVG: .svg
        case .floorPDF, .homePDF: .pdf
        case .floorPNG: .png
        }
    }

    /// What names the file apart from its source (with the source's version, its cache key).
    public var name: String {
        switch self {
        case .floorSVG(let index): "floor\(index).svg"
        case .floorPDF(let index): "floor\(index).pdf"
        case .floorPNG(let index, let width): "floor\(index)-\(width).png"
        case .homePDF: "home.pdf"
        }
    }

    /// The memory drawing it holds at its peak, besides its source: a PNG's pixels; a PDF or
    /// an SVG, its text (a page's marks, a few hundred bytes per room).
    public func memoryBytes(_ source: FloorPlanSource) -> Int {
        let points = source.floors.reduce(0) { $0 + $1.rooms.reduce(0) { $0 + $1.points.count } }
        let drawing = min(points, SheetLayout.maxDrawnPoints * max(source.floors.count, 1)) * 64 + (1 << 20)
        guard case .floorPNG(let index, let width) = self, source.floors.indices.contains(index) else { return drawing }
        return drawing + CairoSheetWriter.pngMemory(SheetLayout.floorPage(source, floor: index), width: width)
    }

    /// The file drawn from `source`; a floor that is not there is refused.
    public func make(from source: FloorPlanSource) throws(FloorPlanError) -> [UInt8] {
        switch self {
        case .floorSVG(let index):
            let sheet = try Self.floor(index, source)
            return SVGSheetWriter.svg(sheet, title: "\(source.title): \(source.floors[index].name)")
        case .floorPDF(let index):
            return try CairoSheetWriter.pdf([try Self.floor(index, source)], title: "\(source.title): \(source.floors[index].name)")
        case .floorPNG(let index, let width):
            return try CairoSheetWriter.png(try Self.floor(index, source), width: width)
        case .homePDF:
            return try CairoSheetWriter.pdf(SheetLayout.sheets(source), title: "\(source.title): floor plans")
        }
    }

    private static func floor(_ index: Int, _ source: FloorPlanSource) throws(FloorPlanError) -> Sheet {
        guard source.floors.indices.contains(index) else { throw FloorPlanError("the home has no floor \(index)") }
        return SheetLayout.floorSheet(source, floor: index)
    }
}
