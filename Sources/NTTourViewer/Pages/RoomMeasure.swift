import NTAPIModel

/// A room's measurements from its outline (metres on the plan): the area it encloses, and its
/// extent along the plan's axes (width across, depth down; an L-shaped room's is its bounding
/// box). Pure.
struct RoomMeasure: Equatable {
    let area: Double
    let width: Double
    let depth: Double

    init(_ points: [(x: Double, y: Double)]) {
        var twice = 0.0
        for index in points.indices {
            let a = points[index], b = points[(index + 1) % points.count]
            twice += a.x * b.y - b.x * a.y
        }
        area = abs(twice) / 2
        let xs = points.map(\.x), ys = points.map(\.y)
        width = (xs.max() ?? 0) - (xs.min() ?? 0)
        depth = (ys.max() ?? 0) - (ys.min() ?? 0)
    }

    /// "4.0 × 3.0 m" or "13′ 1″ × 9′ 10″".
    func size(in units: MeasureUnits) -> String {
        switch units {
        case .metric: "\(Format.decimal(width, places: 1)) × \(Format.decimal(depth, places: 1)) m"
        case .imperial: "\(Self.feetAndInches(width)) × \(Self.feetAndInches(depth))"
        }
    }

    /// "4.0 × 3.0 m · 12.0 m²": its size and area, as the plan's lists say them.
    func summary(in units: MeasureUnits) -> String {
        "\(size(in: units)) · \(Self.area(area, in: units))"
    }

    /// "12.0 m²" or "129 ft²".
    static func area(_ squareMetres: Double, in units: MeasureUnits) -> String {
        switch units {
        case .metric: "\(Format.decimal(squareMetres, places: 1)) m²"
        case .imperial: "\(Format.decimal(squareMetres / (0.3048 * 0.3048), places: 0)) ft²"
        }
    }

    private static func feetAndInches(_ metres: Double) -> String {
        let inches = Int((max(0, min(metres, 1e6)) / 0.0254).rounded())
        return "\(inches / 12)′ \(inches % 12)″"
    }
}
