/// What a panorama's own file says of how it is drawn (docs/api.md "Panorama"), read when it
/// is processed: its Photo Sphere XMP projection, crop and heading, its EXIF orientation. A
/// field the file does not give is nil. Kept as this JSON in the panorama's row.
public struct PanoramaFileGeometry: JSONDocument, Equatable, Sendable {
    /// Where a partial panorama lies on the whole sphere's equirectangular image, in the
    /// XMP's pixels.
    public struct Crop: Equatable, Sendable {
        public var fullWidth: Int
        public var fullHeight: Int
        public var left: Int
        public var top: Int
        public var width: Int
        public var height: Int

        public init(fullWidth: Int, fullHeight: Int, left: Int, top: Int, width: Int, height: Int) {
            (self.fullWidth, self.fullHeight, self.left, self.top, self.width, self.height) = (fullWidth, fullHeight, left, top, width, height)
        }
    }

    public var projection: String?
    public var crop: Crop?
    /// The compass heading of the image's centre, in [0, 360).
    public var heading: Double?
    /// EXIF's 1 to 8.
    public var orientation: Int?

    public init(projection: String? = nil, crop: Crop? = nil, heading: Double? = nil, orientation: Int? = nil) {
        (self.projection, self.crop, self.heading, self.orientation) = (projection, crop, heading, orientation)
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "geometry")
        var crop: Crop?
        if let value = json["crop"], !value.isNull {
            let fields = try Fields(value, context: "crop")
            crop = Crop(fullWidth: try fields.integer("fullWidth"), fullHeight: try fields.integer("fullHeight"), left: try fields.integer("left"),
                        top: try fields.integer("top"), width: try fields.integer("width"), height: try fields.integer("height"))
        }
        let orientation = try json.optionalNumber("orientation").map { Int($0) }
        self.init(projection: try json.optionalString("projection"), crop: crop, heading: try json.optionalNumber("heading"), orientation: orientation)
    }

    /// From a panorama document's `geometry`: what its sources say the file gave.
    public init(document value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "geometry")
        guard let sources = json["sources"] else { throw InvalidDocument("a panorama's geometry says where each part came from") }
        let from = try Fields(sources, context: "sources")
        let read = try PanoramaFileGeometry(value)
        self.init(projection: try from.optionalString("projection") == "file" ? read.projection : nil,
                  crop: try from.optionalString("crop") == "file" ? read.crop : nil,
                  heading: try from.optionalString("heading") == "file" ? read.heading : nil,
                  orientation: try from.optionalString("orientation") == "file" ? read.orientation : nil)
    }

    /// As stored: what the file said, nothing assumed.
    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("crop")
            if let crop { Self.write(crop, to: &writer) } else { writer.null() }
            writer.key("heading"); writer.double(heading)
            writer.key("orientation")
            if let orientation { writer.int(orientation) } else { writer.null() }
            writer.key("projection"); writer.string(projection)
        }
    }

    /// The panorama document's `geometry`: what it is drawn with, and where each came from
    /// (`file`, `upload`, or `assumed`: an equirectangular whole sphere, upright; no heading).
    public func write(to writer: inout JSONWriter, uploadHeading: Double?) {
        writer.object { writer in
            writer.key("crop")
            if let crop { Self.write(crop, to: &writer) } else { writer.null() }
            writer.key("heading"); writer.double(uploadHeading ?? heading)
            writer.key("orientation"); writer.int(orientation ?? 1)
            writer.key("projection"); writer.string(projection ?? "equirectangular")
            writer.key("sources")
            writer.object { writer in
                writer.key("crop"); writer.string(crop == nil ? "assumed" : "file")
                writer.key("heading"); writer.string(uploadHeading != nil ? "upload" : heading != nil ? "file" : nil)
                writer.key("orientation"); writer.string(orientation == nil ? "assumed" : "file")
                writer.key("projection"); writer.string(projection == nil ? "assumed" : "file")
            }
        }
    }

    private static func write(_ crop: Crop, to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("fullHeight"); writer.int(crop.fullHeight)
            writer.key("fullWidth"); writer.int(crop.fullWidth)
            writer.key("height"); writer.int(crop.height)
            writer.key("left"); writer.int(crop.left)
            writer.key("top"); writer.int(crop.top)
            writer.key("width"); writer.int(crop.width)
        }
    }
}
