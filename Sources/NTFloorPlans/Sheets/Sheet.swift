/// One page of a published floor plan as what is drawn on it, in PostScript points from its
/// top left: laid out once (`SheetLayout`), then written as SVG, PDF or PNG alike.
public struct Sheet: Sendable {
    public var width: Double
    public var height: Double
    public var marks: [SheetMark]
}

/// A colour as `#rrggbb` writes it.
public struct SheetColour: Equatable, Sendable {
    public var red: UInt8, green: UInt8, blue: UInt8

    public static let ink = SheetColour(red: 0x1c, green: 0x1c, blue: 0x1c)
    public static let grey = SheetColour(red: 0x6b, green: 0x6b, blue: 0x6b)
    public static let floor = SheetColour(red: 0xf6, green: 0xf3, blue: 0xec)
    public static let white = SheetColour(red: 0xff, green: 0xff, blue: 0xff)

    var hex: String {
        "#" + [red, green, blue].map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined()
    }
}

/// Where a line of text is anchored: its start, middle or end at the point given (its
/// baseline's middle height: the point is the line's vertical middle).
public enum TextAnchor: String, Sendable {
    case start, middle, end
}

public enum SheetMark: Sendable {
    /// A closed outline, filled and stroked (`lineWidth` 0: not stroked).
    case polygon([PlanPoint], fill: SheetColour?, stroke: SheetColour?, lineWidth: Double)
    /// An open line.
    case line([PlanPoint], stroke: SheetColour, lineWidth: Double)
    /// One line of text, its vertical middle at `at`.
    case text(String, at: PlanPoint, size: Double, bold: Bool, anchor: TextAnchor, colour: SheetColour)
    /// A JPEG (the agency's logo) drawn into `box`.
    case image(jpeg: [UInt8], box: PlanBox)
    /// A room's marks, named: the SVG groups them under its name.
    case room(String, [SheetMark])
}
