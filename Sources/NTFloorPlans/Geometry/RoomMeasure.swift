import NTAPIModel

/// A room's measurements from its outline (metres on the plan): the area it encloses, and its
/// width and depth: a rectangle's sides (turned on the plan or not), any other shape's extent
/// along the plan's axes (its bounding box, which its size then says: "max"). Pure.
public struct RoomMeasure: Equatable, Sendable {
    public let area: Double
    public let width: Double
    public let depth: Double
    /// Whether the outline is a rectangle (four corners, each within 2° of square, once points
    /// on a straight wall are left out): its width and depth are then its sides.
    public let isRectangle: Bool

    public init(_ points: [PlanPoint]) {
        var twice = 0.0
        for index in points.indices {
            let a = points[index], b = points[(index + 1) % points.count]
            twice += a.x * b.y - b.x * a.y
        }
        area = abs(twice) / 2
        if let sides = Self.rectangleSides(points) {
            (width, depth, isRectangle) = (sides.across, sides.down, true)
        } else {
            let bounds = PlanBox(around: points)
            (width, depth, isRectangle) = (bounds.width, bounds.height, false)
        }
    }

    /// A rectangle's two sides, the one nearer the plan's x axis first; nil for another shape.
    static func rectangleSides(_ points: [PlanPoint]) -> (across: Double, down: Double)? {
        let corners = Self.corners(points)
        guard corners.count == 4 else { return nil }
        var sides: [(dx: Double, dy: Double, length: Double)] = []
        for index in 0..<4 {
            let a = corners[index], b = corners[(index + 1) % 4]
            let (dx, dy) = (b.x - a.x, b.y - a.y)
            sides.append((dx, dy, (dx * dx + dy * dy).squareRoot()))
        }
        for index in 0..<4 {
            let a = sides[index], b = sides[(index + 1) % 4]
            let cosine = (a.dx * b.dx + a.dy * b.dy) / (a.length * b.length)
            guard abs(cosine) < 0.035 else { return nil } // cos 88°
        }
        let first = (sides[0].length + sides[2].length) / 2, second = (sides[1].length + sides[3].length) / 2
        return abs(sides[0].dx) >= abs(sides[0].dy) ? (first, second) : (second, first)
    }

    /// The outline's corners: its points without repeats (within a centimetre) and without
    /// those on a straight wall (turning less than a degree).
    static func corners(_ points: [PlanPoint]) -> [PlanPoint] {
        var kept: [PlanPoint] = []
        for point in points {
            if let last = kept.last, abs(last.x - point.x) < 0.01 && abs(last.y - point.y) < 0.01 { continue }
            kept.append(point)
        }
        if kept.count > 1, let first = kept.first, let last = kept.last, abs(first.x - last.x) < 0.01 && abs(first.y - last.y) < 0.01 { kept.removeLast() }
        var changed = true
        while changed && kept.count > 3 {
            changed = false
            for index in kept.indices {
                let before = kept[(index + kept.count - 1) % kept.count], point = kept[index], after = kept[(index + 1) % kept.count]
                let (ax, ay, bx, by) = (point.x - before.x, point.y - before.y, after.x - point.x, after.y - point.y)
                let lengths = (ax * ax + ay * ay).squareRoot() * (bx * bx + by * by).squareRoot()
                guard lengths > 0 else { continue }
                // Straight on: the turn's sine is near 0 and its cosine near 1.
                if abs(ax * by - ay * bx) / lengths < 0.0175 && (ax * bx + ay * by) > 0 {
                    kept.remove(at: index)
                    changed = true
                    break
                }
            }
        }
        return kept
    }

    /// "4.0 × 3.0 m", "13′ 1″ × 9′ 10″", or an irregular room's "max 5.2 × 4.1 m".
    public func size(in units: MeasureUnits) -> String {
        let sides = switch units {
        case .metric: "\(Numerals.decimal(width, places: 1)) × \(Numerals.decimal(depth, places: 1)) m"
        case .imperial: "\(Self.feetAndInches(width)) × \(Self.feetAndInches(depth))"
        }
        return isRectangle ? sides : "max " + sides
    }

    /// The size in `shown`'s units, with the other in brackets where it asks for both.
    public func size(_ shown: ShownUnits) -> String {
        shown.both(size(in: shown.primary), shown.bracketed.map { size(in: $0).replacingPrefix("max ") })
    }

    /// "4.0 × 3.0 m · 12.0 m²": its size and area, as the plan's lists say them.
    public func summary(in units: MeasureUnits) -> String {
        "\(size(in: units)) · \(Self.area(area, in: units))"
    }

    /// "12.0 m²" or "129 ft²".
    public static func area(_ squareMetres: Double, in units: MeasureUnits) -> String {
        switch units {
        case .metric: "\(Numerals.decimal(squareMetres, places: 1)) m²"
        case .imperial: "\(Numerals.decimal(squareMetres / (0.3048 * 0.3048), places: 0)) ft²"
        }
    }

    /// An area in `shown`'s units, with the other in brackets where it asks for both.
    public static func area(_ squareMetres: Double, _ shown: ShownUnits) -> String {
        shown.both(area(squareMetres, in: shown.primary), shown.bracketed.map { area(squareMetres, in: $0) })
    }

    static func feetAndInches(_ metres: Double) -> String {
        let inches = Int((max(0, min(metres, 1e6)) / 0.0254).rounded())
        return "\(inches / 12)′ \(inches % 12)″"
    }
}

/// The units a sheet prints measurements in: the agency's, and where its locale expects both
/// (a UK agency: metres, and feet for buyers who think in them), the other in brackets.
public struct ShownUnits: Equatable, Sendable {
    public var primary: MeasureUnits
    public var bracketed: MeasureUnits?

    public init(primary: MeasureUnits, bracketed: MeasureUnits? = nil) {
        self.primary = primary
        self.bracketed = bracketed
    }

    /// The agency's units; with the other in brackets when its floors are named the UK way.
    public init(_ units: MeasureUnits, naming: FloorNaming) {
        self.init(primary: units, bracketed: naming == .uk ? (units == .metric ? .imperial : .metric) : nil)
    }

    func both(_ primary: String, _ bracketed: String?) -> String {
        bracketed.map { "\(primary) (\($0))" } ?? primary
    }
}

extension String {
    fileprivate func replacingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
}
