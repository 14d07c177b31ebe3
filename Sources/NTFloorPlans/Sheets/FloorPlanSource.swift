import NTAPIModel

/// What a published floor plan is drawn from: the property's name, its floors' rooms as
/// outlines in metres, where north is when the panoramas' headings tell it, the agency's brand
/// (nil: an unbranded plan, for listing sites, with nothing of the agency or the platform),
/// the units and the paper: everything drawn is here.
public struct FloorPlanSource: Sendable {
    public struct Room: Sendable {
        public var name: String
        public var points: [PlanPoint]

        public init(name: String, points: [PlanPoint]) {
            self.name = name
            self.points = points
        }
    }

    public struct Floor: Sendable {
        public var name: String
        public var rooms: [Room]

        public init(name: String, rooms: [Room]) {
            self.name = name
            self.rooms = rooms
        }

        /// The rooms' areas together, in square metres.
        public var area: Double { rooms.reduce(0) { $0 + RoomMeasure($1.points).area } }
    }

    /// The agency on a branded plan: its name, contact lines and logo (a JPEG, as branding
    /// keeps it).
    public struct Brand: Sendable {
        public var name: String?
        public var contact: [String]
        public var logo: [UInt8]?

        public init(name: String?, contact: [String], logo: [UInt8]?) {
            self.name = name
            self.contact = contact
            self.logo = logo
        }

        var isEmpty: Bool { name == nil && contact.isEmpty && logo == nil }
    }

    public var title: String
    public var floors: [Floor]
    /// North, in degrees clockwise from up the plan; nil when no heading tells it.
    public var north: Double?
    public var brand: Brand?
    public var units: ShownUnits
    public var paper: Paper

    public init(title: String, floors: [Floor], north: Double?, brand: Brand?, units: ShownUnits, paper: Paper) {
        self.title = title
        self.floors = floors
        self.north = north
        self.brand = brand
        self.units = units
        self.paper = paper
    }

    /// The home's area: its floors' together.
    public var area: Double { floors.reduce(0) { $0 + $1.area } }
}

/// The paper a PDF is set on: A4, or Letter where floors are named as in the US.
public enum Paper: String, Sendable {
    case a4, letter

    public init(_ naming: FloorNaming) {
        self = naming == .us ? .letter : .a4
    }

    /// Portrait, in PostScript points.
    var size: (width: Double, height: Double) {
        switch self {
        case .a4: (595.28, 841.89)
        case .letter: (612, 792)
        }
    }
}
