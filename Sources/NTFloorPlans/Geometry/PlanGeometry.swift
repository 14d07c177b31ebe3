import NTAPIModel

/// A point on a plan: metres in the frame of its room outlines (x to the right, y down), or a
/// drawing's units once placed.
public typealias PlanPoint = (x: Double, y: Double)

/// A box, in whatever units its caller draws in.
public struct PlanBox: Equatable, Sendable {
    public var left: Double, top: Double, right: Double, bottom: Double

    public init(left: Double, top: Double, right: Double, bottom: Double) {
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
    }

    /// The bounds of `points` (all zero when there are none).
    public init(around points: [PlanPoint]) {
        self.init(left: points.map(\.x).min() ?? 0, top: points.map(\.y).min() ?? 0, right: points.map(\.x).max() ?? 0, bottom: points.map(\.y).max() ?? 0)
    }

    public var width: Double { right - left }
    public var height: Double { bottom - top }

    public func meets(_ other: PlanBox) -> Bool {
        left < other.right && other.left < right && top < other.bottom && other.top < bottom
    }

    /// Whether a circle comes within `gap` of it.
    public func meets(circle centre: PlanPoint, radius: Double, gap: Double) -> Bool {
        let dx = max(left - centre.x, 0, centre.x - right), dy = max(top - centre.y, 0, centre.y - bottom)
        return (dx * dx + dy * dy).squareRoot() < radius + gap
    }

    public func contains(_ other: PlanBox) -> Bool {
        other.left >= left && other.right <= right && other.top >= top && other.bottom <= bottom
    }
}

/// The geometry every drawing of a plan shares (the viewer's SVG, the dollhouse, the
/// published sheets): outlines read and bounded, centres, and where a room's label goes. Pure.
public enum PlanGeometry {
    /// An outline as the API stores it, `[[x, y], …]`; nil when it does not read.
    public static func points(_ outline: String) -> [PlanPoint]? {
        guard let array = try? JSONReader.parse(outline).array else { return nil }
        var points: [PlanPoint] = []
        for point in array {
            guard let pair = point.array, pair.count == 2, let x = pair[0].double, let y = pair[1].double, x.isFinite, y.isFinite else { return nil }
            points.append((x, y))
        }
        return points
    }

    /// At most `most` of an outline's points, evenly taken: what a drawing of a 10,000-point
    /// room needs is its shape, not every point a scanner gave.
    public static func bounded(_ points: [PlanPoint], to most: Int) -> [PlanPoint] {
        guard points.count > most, most > 0 else { return points }
        let step = (points.count + most - 1) / most
        return Swift.stride(from: 0, to: points.count, by: step).map { points[$0] }
    }

    /// The area-weighted centre of a polygon; its vertices' mean when it has no area, or when
    /// the area-weighted centre falls outside the polygon's bounds (a self-crossing outline
    /// whose signed areas nearly cancel puts it arbitrarily far away).
    public static func centroid(_ points: [PlanPoint]) -> PlanPoint {
        guard !points.isEmpty else { return (0, 0) }
        var area = 0.0, cx = 0.0, cy = 0.0
        for index in points.indices {
            let a = points[index], b = points[(index + 1) % points.count]
            let cross = a.x * b.y - b.x * a.y
            area += cross
            cx += (a.x + b.x) * cross
            cy += (a.y + b.y) * cross
        }
        let count = Double(points.count)
        let mean = (x: points.map(\.x).reduce(0, +) / count, y: points.map(\.y).reduce(0, +) / count)
        guard abs(area) > 1e-9 else { return mean }
        let centre = (x: cx / (3 * area), y: cy / (3 * area))
        let bounds = PlanBox(around: points)
        guard centre.x.isFinite, centre.y.isFinite, (bounds.left...bounds.right).contains(centre.x), (bounds.top...bounds.bottom).contains(centre.y) else {
            return mean
        }
        return centre
    }

    /// The box a label takes with its first line's middle at `point`: each line `lineHeight`
    /// em under the one before, each character taken as 0.62 em wide, a little wider than
    /// system-ui's and DejaVu Sans's average, so that a label clear here is clear as drawn.
    public static func labelBox(at point: PlanPoint, lines: [String], fontSize: Double, lineHeight: Double = 1.2) -> PlanBox {
        let width = Double(lines.map(\.count).max() ?? 0) * 0.62 * fontSize
        return PlanBox(left: point.x - width / 2, top: point.y - 0.65 * fontSize, right: point.x + width / 2,
                       bottom: point.y + (Double(max(lines.count, 1) - 1) * lineHeight + 0.65) * fontSize)
    }

    /// Where a room's label goes: the room's centre, unless a dot (a panorama often stands in
    /// the middle of its room) or a label already placed lies there; then the nearest of a few
    /// places around it, down, up (three lines each way) and aside, that keeps its middle in the
    /// room's bounds (and, given its `outline`, inside it: an L's centre may lie outside), the
    /// whole label in the drawing, and is clear of both. The centre when none is.
    public static func labelPlace(centre: PlanPoint, lines: [String], fontSize: Double, lineHeight: Double = 1.2, dotRadius: Double,
                                  within bounds: PlanBox, outline: [PlanPoint]? = nil, drawing: PlanBox? = nil, dots: [PlanPoint], taken: [PlanBox]) -> PlanPoint {
        let step = 0.6 * fontSize
        let width = labelBox(at: centre, lines: lines, fontSize: fontSize, lineHeight: lineHeight).right - centre.x
        var candidates: [PlanPoint] = []
        for rung in 0..<13 {
            let dy = Double((rung + 1) / 2) * step * (rung.isMultiple(of: 2) ? 1 : -1)
            for dx in [0, -width, width] { candidates.append((centre.x + dx, centre.y + dy)) }
        }
        let clear = candidates.first { point in
            guard (bounds.left...bounds.right).contains(point.x), (bounds.top...bounds.bottom).contains(point.y) else { return false }
            if let outline, !contains(outline, point) { return false }
            let box = labelBox(at: point, lines: lines, fontSize: fontSize, lineHeight: lineHeight)
            if let drawing, !drawing.contains(box) { return false }
            return !dots.contains { box.meets(circle: $0, radius: dotRadius, gap: 0.2 * fontSize) } && !taken.contains { box.meets($0) }
        }
        return clear ?? centre
    }

    /// Whether `point` lies inside the polygon (even-odd).
    public static func contains(_ polygon: [PlanPoint], _ point: PlanPoint) -> Bool {
        var inside = false
        for index in polygon.indices {
            let a = polygon[index], b = polygon[(index + 1) % polygon.count]
            if (a.y > point.y) != (b.y > point.y), point.x < a.x + (point.y - a.y) / (b.y - a.y) * (b.x - a.x) { inside.toggle() }
        }
        return inside
    }
}

/// Numbers as drawings and pages print them.
public enum Numerals {
    /// A number with a fixed count of decimals, without Foundation's formatters.
    public static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        // Clamped far below Int's range, so that no finite value can trap the conversion.
        let scaled = Int(min(abs(value) * scale, 1e15).rounded())
        let whole = scaled / Int(scale)
        let fraction = scaled % Int(scale)
        var text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
        if places > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: places - digits.count) + digits
        }
        return text
    }
}
