#if canImport(Glibc)
import Glibc
#endif

/// A tenant's branding on its share links (`GET`/`PUT /v1/branding`; docs/api.md "Branding"):
/// the name visitors read, one accent colour, contact lines, how floors are named, the units
/// measurements are shown in, and whether a logo is set (`PUT /v1/branding/logo`). Every field
/// may be absent: a tenant that set none has the platform's look, the UK floor names and metres.
public struct BrandingDocument: JSONDocument, Equatable, Sendable {
    public struct Logo: Equatable, Sendable {
        public var width: Int
        public var height: Int

        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    public var name: String?
    /// `#rrggbb`, lowercase.
    public var accent: String?
    public var contact: [String]
    public var floorNames: FloorNaming
    /// The units chosen, else those of the floor naming's country (`MeasureUnits.of`).
    public var units: MeasureUnits
    public var logo: Logo?
    public var updatedAt: String?

    public init(name: String? = nil, accent: String? = nil, contact: [String] = [], floorNames: FloorNaming = .uk, units: MeasureUnits? = nil,
                logo: Logo? = nil, updatedAt: String? = nil) {
        self.name = name
        self.accent = accent
        self.contact = contact
        self.floorNames = floorNames
        self.units = units ?? MeasureUnits.of(floorNames)
        self.logo = logo
        self.updatedAt = updatedAt
    }

    /// Whether a visitor of a branded link sees any of it.
    public var isEmpty: Bool { name == nil && accent == nil && contact.isEmpty && logo == nil }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("accent"); writer.string(accent)
            writer.key("contact"); writer.array(contact) { $0.string($1) }
            writer.key("floorNames"); writer.string(floorNames.rawValue)
            writer.key("logo")
            if let logo {
                writer.object { writer in
                    writer.key("height"); writer.int(logo.height)
                    writer.key("width"); writer.int(logo.width)
                }
            } else {
                writer.null()
            }
            writer.key("name"); writer.string(name)
            writer.key("units"); writer.string(units.rawValue)
            writer.key("updatedAt"); writer.string(updatedAt)
        }
    }
}

/// The body of `PUT /v1/branding`: `{"name": "Harbour Homes", "accent": "#1f5f8b", "contact":
/// ["Jane Agent", "+44 20 7946 0000"], "floorNames": "uk", "units": "metric"}`, every field
/// optional (absent or null: none, `uk`, and the units of the floor naming's country). The logo
/// has a route of its own.
public struct BrandingInput: Equatable, Sendable {
    public var name: String?
    public var accent: String?
    public var contact: [String]
    public var floorNames: FloorNaming
    /// Nil: those of `floorNames`' country, as they change.
    public var units: MeasureUnits?

    /// Contact lines a link shows at most, each a name people read.
    public static let maxContactLines = 4

    public init(name: String? = nil, accent: String? = nil, contact: [String] = [], floorNames: FloorNaming = .uk, units: MeasureUnits? = nil) {
        self.name = name
        self.accent = accent
        self.contact = contact
        self.floorNames = floorNames
        self.units = units
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> BrandingInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        let name = try json.optionalString("name").map { text throws(InvalidDocument) in try DisplayName.validated(text, "name") }
        let accent = try json.optionalString("accent").map { text throws(InvalidDocument) in try AccentColour.validated(text) }
        var contact: [String] = []
        if let lines = json["contact"], !lines.isNull {
            guard let items = lines.array, items.count <= maxContactLines else {
                throw InvalidDocument("contact must be an array of at most \(maxContactLines) lines")
            }
            for item in items {
                guard let line = item.string else { throw InvalidDocument("contact must be an array of at most \(maxContactLines) lines") }
                contact.append(try DisplayName.validated(line, "a contact line"))
            }
        }
        let floorNames: FloorNaming
        if let text = try json.optionalString("floorNames") {
            guard let naming = FloorNaming(rawValue: text) else { throw InvalidDocument("floorNames must be \"uk\", \"us\" or \"numbers\"") }
            floorNames = naming
        } else {
            floorNames = .uk
        }
        let units = try json.optionalString("units").map { text throws(InvalidDocument) in
            guard let units = MeasureUnits(rawValue: text) else { throw InvalidDocument("units must be \"metric\" or \"imperial\"") }
            return units
        }
        return BrandingInput(name: name, accent: accent, contact: contact, floorNames: floorNames, units: units)
    }
}

/// An accent colour as `#rrggbb`, dark enough for white text on it and for links on white: a
/// contrast of at least 4.5:1 against white (WCAG 2.2, 1.4.3, normal text).
public enum AccentColour {
    public static let minimumContrast = 4.5

    public static func validated(_ text: String) throws(InvalidDocument) -> String {
        let colour = text.lowercased()
        let digits = Array(colour.utf8.dropFirst())
        guard colour.utf8.first == UInt8(ascii: "#"), digits.count == 6,
              digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) else {
            throw InvalidDocument("accent must be a colour as #rrggbb")
        }
        let ratio = contrastAgainstWhite(colour)
        guard ratio >= minimumContrast else {
            throw InvalidDocument("accent \(colour) has a contrast of \(oneDecimal(ratio)):1 against white; at least 4.5:1 is needed for text on it and links in it: choose a darker shade")
        }
        return colour
    }

    /// (1.05) / (L + 0.05), L the colour's relative luminance (WCAG 2.2's definition).
    public static func contrastAgainstWhite(_ colour: String) -> Double {
        let digits = Array(colour.utf8.dropFirst())
        func channel(_ at: Int) -> Double {
            let value = Double(Int(String(decoding: digits[at..<(at + 2)], as: UTF8.self), radix: 16) ?? 0) / 255
            return value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
        }
        let luminance = 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4)
        return 1.05 / (luminance + 0.05)
    }

    /// One decimal, rounded down (a ratio just under 4.5 never reads as 4.5).
    private static func oneDecimal(_ ratio: Double) -> String {
        let tenths = Int((ratio * 10).rounded(.down))
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// How a tenant's floors are named where their capture gave them no name: the UK's ("Ground
/// floor", "First floor"), the US's ("1st floor", "2nd floor"), or numbers ("Floor 0").
public enum FloorNaming: String, CaseIterable, Sendable {
    case uk, us, numbers

    public func title(_ number: Int) -> String {
        switch self {
        case .numbers: return "Floor \(number)"
        case _ where number < 0: return number == -1 ? "Basement" : "Basement \(-number)"
        case .uk:
            let words = ["Ground", "First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth", "Tenth"]
            return number < words.count ? words[number] + " floor" : "Floor \(number)"
        case .us:
            let storey = number + 1
            let suffix = (11...13).contains(storey % 100) ? "th" : [1: "st", 2: "nd", 3: "rd"][storey % 10] ?? "th"
            return "\(storey)\(suffix) floor"
        }
    }
}

/// The units measurements are shown in: metres and square metres, or feet and square feet.
public enum MeasureUnits: String, CaseIterable, Sendable {
    case metric, imperial

    /// Those of the country a floor naming is of: feet where floors are named as in the US.
    public static func of(_ naming: FloorNaming) -> MeasureUnits {
        naming == .us ? .imperial : .metric
    }
}
