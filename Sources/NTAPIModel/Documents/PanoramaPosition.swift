/// Where a panorama was taken on its floor's plan (docs/api.md "Panorama"): `x` and `y` in
/// metres in the plan's frame (x to the right, y down the page, as room outlines are), and
/// `heading`, when known, the direction of the image's centre in degrees clockwise from up the
/// page; `height`, when known, how high above its floor the camera was, in metres (RoomPlan
/// knows it; else the server's `panoramaHeightMetres`). The server and the client read it by
/// the same rules.
public struct PanoramaPosition: Equatable, Hashable, Sendable {
    public let x: Double
    public let y: Double
    /// In [0, 360).
    public let heading: Double?
    /// Metres above the floor, in (0, `maxHeight`].
    public let height: Double?

    /// The farthest a position may be from the plan's origin, in metres on either axis.
    public static let maxCoordinate = 10_000.0
    /// The highest a camera may stand above its floor, in metres.
    public static let maxHeight = 10.0

    /// A position from numbers: `invalidInput` past ±`maxCoordinate`, a heading beyond ±360°,
    /// a height not above the floor or past `maxHeight`, or a number that is not finite. The
    /// heading is kept as its equivalent in [0, 360).
    public init(x: Double, y: Double, heading: Double? = nil, height: Double? = nil) throws(InvalidDocument) {
        for (name, value) in [("x", x), ("y", y)] where !(value.isFinite && abs(value) <= Self.maxCoordinate) {
            throw InvalidDocument("\(name) must be a number of metres from -\(Int(Self.maxCoordinate)) to \(Int(Self.maxCoordinate))")
        }
        if let heading, !(heading.isFinite && abs(heading) <= 360) {
            throw InvalidDocument("heading must be a number of degrees from -360 to 360")
        }
        if let height, !(height.isFinite && height > 0 && height <= Self.maxHeight) {
            throw InvalidDocument("height must be a number of metres above the floor, at most \(Int(Self.maxHeight))")
        }
        self.x = x
        self.y = y
        self.heading = heading.map(Self.normalized)
        self.height = height
    }

    /// From the text of a query string or upload metadata: none when neither `x` nor `y` is
    /// given; `x` and `y` come together, a `heading` and a `height` only with them. Numbers are
    /// decimal (`-1.25`, `3`): no exponents, hex, `nan` or `inf`.
    public static func parse(x: String?, y: String?, heading: String?, height: String? = nil) throws(InvalidDocument) -> PanoramaPosition? {
        switch (x, y) {
        case (nil, nil):
            if heading != nil { throw InvalidDocument("heading needs a position: give x and y with it") }
            if height != nil { throw InvalidDocument("height needs a position: give x and y with it") }
            return nil
        case (let x?, let y?):
            return try PanoramaPosition(x: try decimal(x, "x"), y: try decimal(y, "y"), heading: try heading.map { text throws(InvalidDocument) in try decimal(text, "heading") },
                                        height: try height.map { text throws(InvalidDocument) in try decimal(text, "height") })
        default:
            throw InvalidDocument("x and y come together: a position needs both")
        }
    }

    /// The `position` member of a panorama document: an object, or null for none.
    public init?(_ value: JSONValue?) throws(InvalidDocument) {
        guard let value, !value.isNull else { return nil }
        let json = try Fields(value, context: "position")
        guard let x = try json.optionalNumber("x"), let y = try json.optionalNumber("y") else {
            throw InvalidDocument("position needs x and y")
        }
        try self.init(x: x, y: y, heading: try json.optionalNumber("heading"), height: try json.optionalNumber("height"))
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("heading"); writer.double(heading)
            writer.key("height"); writer.double(height)
            writer.key("x"); writer.double(x)
            writer.key("y"); writer.double(y)
        }
    }

    /// The query parameters (or metadata pairs) that say this position, in the order `parse` reads them.
    public var parameters: [(name: String, value: String)] {
        [("x", Self.text(x)), ("y", Self.text(y))] + (heading.map { [("heading", Self.text($0))] } ?? []) + (height.map { [("height", Self.text($0))] } ?? [])
    }

    private static func normalized(_ degrees: Double) -> Double {
        let turned = degrees.truncatingRemainder(dividingBy: 360)
        let positive = turned < 0 ? turned + 360 : turned
        return positive >= 360 ? 0 : positive + 0 // + 0 makes -0 plain 0; a tiny negative rounds up to 360
    }

    private static func text(_ value: Double) -> String {
        var writer = JSONWriter()
        writer.double(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private static func decimal(_ text: String, _ name: String) throws(InvalidDocument) -> Double {
        let unsigned = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let wellFormed = text.count <= 32 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
        guard wellFormed, let value = Double(text) else { throw InvalidDocument("\(name) must be a decimal number, not \"\(text.prefix(40))\"") }
        return value
    }
}
