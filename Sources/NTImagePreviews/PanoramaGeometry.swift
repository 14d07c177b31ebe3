/// How an image's stored pixels are turned to be seen upright (EXIF's Orientation, 1 to 8).
/// Points are fractions of the image's width and height, pixel centres at (i + 0.5) / n.
public enum ImageOrientation: Int, Sendable, Equatable, CaseIterable {
    case up = 1, mirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Whether the upright image's width is the stored image's height.
    public var swapsAxes: Bool { rawValue >= 5 }

    /// The upright size of a stored `size` image (and the stored size of an upright one).
    func upright(_ size: Image) -> Image { swapsAxes ? Image(width: size.height, height: size.width) : size }

    /// The stored point shown at upright point (x, y).
    @inline(__always)
    func storedPoint(_ x: Double, _ y: Double) -> (x: Double, y: Double) {
        switch self {
        case .up: (x, y)
        case .mirrored: (1 - x, y)
        case .down: (1 - x, 1 - y)
        case .downMirrored: (x, 1 - y)
        case .leftMirrored: (y, x)
        case .right: (y, 1 - x)
        case .rightMirrored: (1 - y, 1 - x)
        case .left: (1 - y, x)
        }
    }
}

/// Where a partial panorama's image lies on the whole sphere's equirectangular image, in
/// Google's Photo Sphere XMP's pixels (`GPano:FullPanoWidthPixels`, `CroppedAreaLeftPixels`, …):
/// a sweep without the poles, or less than 360°. The image may be of another resolution than
/// these numbers; only their proportions are used.
public struct PanoramaCrop: Sendable, Equatable {
    public let fullWidth: Int
    public let fullHeight: Int
    public let left: Int
    public let top: Int
    public let width: Int
    public let height: Int

    /// A crop within its whole panorama (it may run past the right edge and on at the left:
    /// the sphere wraps there); nil when the numbers do not make one.
    public init?(fullWidth: Int, fullHeight: Int, left: Int, top: Int, width: Int, height: Int) {
        guard fullWidth > 0, fullHeight > 0, (1...fullWidth).contains(width), (1...fullHeight).contains(height),
              (0..<fullWidth).contains(left), top >= 0, top + height <= fullHeight else { return nil }
        (self.fullWidth, self.fullHeight, self.left, self.top, self.width, self.height) = (fullWidth, fullHeight, left, top, width, height)
    }

    /// Whether it is the whole sphere.
    public var isWhole: Bool { width == fullWidth && height == fullHeight }

    /// The point of the image at point (x, y) of the whole panorama (fractions); nil outside it.
    @inline(__always)
    func imagePoint(_ x: Double, _ y: Double) -> (x: Double, y: Double)? {
        var column = x * Double(fullWidth) - Double(left)
        if column < 0 { column += Double(fullWidth) }
        let row = (y * Double(fullHeight) - Double(top)) / Double(height)
        column /= Double(width)
        guard column >= 0, column < 1, row >= 0, row < 1 else { return nil }
        return (column, row)
    }
}

/// What an image's own metadata says of how it is drawn on the sphere: its EXIF orientation,
/// its Photo Sphere XMP projection, crop and heading. Read from the file's headers (bounded
/// segments, never the pixels); what is absent or malformed is left out, never an error.
public struct PanoramaGeometry: Sendable, Equatable {
    /// EXIF's orientation; nil when the file gives none (a HEIC's is its container's, applied
    /// by its decoder: never).
    public var orientation: ImageOrientation?
    /// `GPano:ProjectionType` as written.
    public var projection: String?
    /// Where a partial panorama lies; nil for the whole sphere (or a projection other than
    /// equirectangular, whose crop is not drawn).
    public var crop: PanoramaCrop?
    /// `GPano:PoseHeadingDegrees`: the compass heading of the image's centre, in [0, 360).
    public var heading: Double?
    public init() {}

    public static let whole = PanoramaGeometry()

    /// How the stored pixels are turned to be drawn: as the file says, else as stored.
    var turned: ImageOrientation { orientation ?? .up }

    /// Whether the image is drawn as it is stored: upright, the whole sphere.
    public var isWhole: Bool { turned == .up && crop == nil }

    /// The geometry `format`'s headers in `bytes` declare (a HEIC's read only when it holds at
    /// most `maxItems` images, as its decoding).
    public static func read(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, maxItems: Int) -> PanoramaGeometry {
        let found = ImageMetadata.read(format, bytes, maxItems: maxItems)
        var geometry = PanoramaGeometry()
        geometry.orientation = found.exif.flatMap { exif in exif.withUnsafeBytes { TIFFOrientation.read($0) } }
        if let xmp = found.xmp { geometry.apply(PhotoSphereXMP(xmp)) }
        return geometry
    }

    private mutating func apply(_ xmp: PhotoSphereXMP) {
        projection = xmp.text("ProjectionType")
        if let degrees = xmp.number("PoseHeadingDegrees"), degrees.isFinite, abs(degrees) <= 360 {
            let turned = degrees.truncatingRemainder(dividingBy: 360)
            heading = turned < 0 ? turned + 360 : turned
        }
        guard projection == nil || projection == "equirectangular" else { return }
        if let fullWidth = xmp.integer("FullPanoWidthPixels"), let fullHeight = xmp.integer("FullPanoHeightPixels"),
           let width = xmp.integer("CroppedAreaImageWidthPixels"), let height = xmp.integer("CroppedAreaImageHeightPixels"),
           let crop = PanoramaCrop(fullWidth: fullWidth, fullHeight: fullHeight, left: xmp.integer("CroppedAreaLeftPixels") ?? 0,
                                   top: xmp.integer("CroppedAreaTopPixels") ?? 0, width: width, height: height), !crop.isWhole {
            self.crop = crop
        }
    }

    /// The stored point (fractions of the stored image) drawn at point (x, y) of the whole
    /// sphere's equirectangular image; nil where the image does not reach.
    @inline(__always)
    func storedPoint(_ x: Double, _ y: Double) -> (x: Double, y: Double)? {
        guard let crop else { return turned.storedPoint(x, y) }
        guard let point = crop.imagePoint(x, y) else { return nil }
        return turned.storedPoint(point.x, point.y)
    }

    /// The whole sphere's size, upright, for an image stored at `size`: the image's own
    /// upright size without a crop; with one, as large as its proportions make the image.
    func sphere(stored size: Image) -> Image {
        let upright = turned.upright(size)
        guard let crop else { return upright }
        let width = max(1, Int((Double(upright.width) * Double(crop.fullWidth) / Double(crop.width)).rounded()))
        return Image(width: width, height: max(1, Int((Double(width) * Double(crop.fullHeight) / Double(crop.fullWidth)).rounded())))
    }
}

/// The EXIF (TIFF) and XMP an image's headers carry.
struct ImageMetadata {
    var exif: [UInt8]?
    var xmp: [UInt8]?

    /// EXIF or XMP larger than this is not read (a JPEG's segment holds 64 KiB at most).
    static let maxXMPBytes = 1 << 20

    /// What `format`'s headers in `bytes` carry (a HEIC's read only when it holds at most
    /// `maxItems` images, as its decoding).
    static func read(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, maxItems: Int) -> ImageMetadata {
        switch format {
        case .jpeg: jpeg(bytes)
        case .png: png(bytes)
        case .heic: HEICImage.metadata(bytes, maxItems: maxItems)
        }
    }

    /// A JPEG's APP1 segments before its first scan: `Exif\0\0` then TIFF, or XMP's namespace
    /// then the packet.
    static func jpeg(_ bytes: UnsafeRawBufferPointer) -> ImageMetadata {
        var found = ImageMetadata()
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return found }
        let exifName = Array("Exif\0\0".utf8), xmpName = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
        var index = 2
        while index + 4 <= bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            // The first scan, or the image's end: no headers after.
            guard marker != 0xDA, marker != 0xD9 else { break }
            if marker == 0xFF { index += 1; continue }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2, index + 2 + length <= bytes.count else { break }
            let segment = UnsafeRawBufferPointer(rebasing: bytes[(index + 4)..<(index + 2 + length)])
            if marker == 0xE1 {
                if found.exif == nil, segment.starts(with: exifName) {
                    found.exif = Array(segment[exifName.count...])
                } else if found.xmp == nil, segment.starts(with: xmpName) {
                    found.xmp = Array(segment[xmpName.count...])
                }
            }
            index += 2 + length
        }
        return found
    }

    /// A PNG's `eXIf` chunk and its uncompressed `iTXt` of keyword `XML:com.adobe.xmp`, before
    /// its image data.
    static func png(_ bytes: UnsafeRawBufferPointer) -> ImageMetadata {
        var found = ImageMetadata()
        let keyword = Array("XML:com.adobe.xmp\0".utf8)
        var index = 8
        while index + 12 <= bytes.count {
            let length = bytes[index..<index + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[index + 4..<index + 8], as: UTF8.self)
            guard type != "IDAT", type != "IEND", length <= bytes.count - index - 12 else { break }
            let data = UnsafeRawBufferPointer(rebasing: bytes[(index + 8)..<(index + 8 + length)])
            if type == "eXIf", length <= maxXMPBytes {
                found.exif = Array(data)
            } else if type == "iTXt", length <= maxXMPBytes, data.starts(with: keyword), data.count > keyword.count + 2,
                      data[keyword.count] == 0 {
                // Compression flag (0), method, then a language tag and a translated keyword,
                // each ended by a zero: the text after them.
                var start = keyword.count + 2
                for _ in 0..<2 {
                    guard let end = data[start...].firstIndex(of: 0) else { start = data.count; break }
                    start = end + 1
                }
                found.xmp = Array(data[start...])
            }
            index += length + 12
        }
        return found
    }
}

/// The tags of a TIFF structure (EXIF's), either byte order, read in place and bounded: at most
/// 512 entries a directory, every offset checked against the bytes.
struct TIFFTags {
    private let tiff: UnsafeRawBufferPointer
    private let little: Bool
    /// The first image directory's offset.
    let first: Int

    init?(_ tiff: UnsafeRawBufferPointer) {
        guard tiff.count >= 8 else { return nil }
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        self.tiff = tiff
        guard let first = Self.integer(tiff, little, 4, 4), Self.integer(tiff, little, 2, 2) == 42 else { return nil }
        self.first = first
    }

    func integer(_ offset: Int, _ count: Int) -> Int? { Self.integer(tiff, little, offset, count) }

    private static func integer(_ tiff: UnsafeRawBufferPointer, _ little: Bool, _ offset: Int, _ count: Int) -> Int? {
        guard offset >= 0, offset + count <= tiff.count else { return nil }
        let bytes = tiff[offset..<offset + count]
        return (little ? bytes.reversed() : Array(bytes)).reduce(0) { $0 << 8 | Int($1) }
    }

    /// The entry of `tag` in the directory at `directory`: its type, its count, and the offset
    /// of its 4-byte value field (the value itself when it fits, else the value's offset).
    func entry(_ tag: Int, in directory: Int) -> (type: Int, count: Int, field: Int)? {
        guard let entries = integer(directory, 2) else { return nil }
        for index in 0..<min(entries, 512) {
            let at = directory + 2 + index * 12
            guard let found = integer(at, 2) else { return nil }
            if found == tag, let type = integer(at + 2, 2), let count = integer(at + 4, 4) { return (type, count, at + 8) }
        }
        return nil
    }

    /// `count` bytes at `offset`.
    func bytes(_ offset: Int, _ count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + count <= tiff.count else { return nil }
        return Array(tiff[offset..<offset + count])
    }
}

/// The Orientation tag (0x0112) of EXIF's first image directory: a SHORT, its value in the
/// entry's first two bytes.
enum TIFFOrientation {
    static func read(_ tiff: UnsafeRawBufferPointer) -> ImageOrientation? {
        guard let tags = TIFFTags(tiff), let entry = tags.entry(0x0112, in: tags.first), entry.type == 3,
              let value = tags.integer(entry.field, 2) else { return nil }
        return ImageOrientation(rawValue: value)
    }
}

/// When an image was taken, as its EXIF says: DateTimeOriginal (0x9003) of the Exif directory
/// (0x8769), "YYYY:MM:DD HH:MM:SS" in the camera's local time, given as "YYYY-MM-DDTHH:MM:SS";
/// nil when absent or not a date and time.
public enum CaptureTime {
    public static func read(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, maxItems: Int) -> String? {
        ImageMetadata.read(format, bytes, maxItems: maxItems).exif.flatMap { exif in exif.withUnsafeBytes { read(tiff: $0) } }
    }

    static func read(tiff: UnsafeRawBufferPointer) -> String? {
        guard let tags = TIFFTags(tiff), let pointer = tags.entry(0x8769, in: tags.first), pointer.type == 4,
              let directory = tags.integer(pointer.field, 4), let entry = tags.entry(0x9003, in: directory), entry.type == 2, entry.count >= 19,
              let offset = tags.integer(entry.field, 4), let text = tags.bytes(offset, 19) else { return nil }
        // Digits where a date and time has them, and its separators.
        let digits: Set<Int> = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        for (index, byte) in text.enumerated() {
            let expected: UInt8? = [4: UInt8(ascii: ":"), 7: UInt8(ascii: ":"), 10: UInt8(ascii: " "), 13: UInt8(ascii: ":"), 16: UInt8(ascii: ":")][index]
            if digits.contains(index) ? !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) : byte != expected { return nil }
        }
        let number = { (range: Range<Int>) -> Int in text[range].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } }
        guard number(0..<4) > 0, (1...12).contains(number(5..<7)), (1...31).contains(number(8..<10)) else { return nil }
        var iso = text
        (iso[4], iso[7], iso[10]) = (UInt8(ascii: "-"), UInt8(ascii: "-"), UInt8(ascii: "T"))
        return String(decoding: iso, as: UTF8.self)
    }
}

/// The Photo Sphere properties (Google's `GPano` namespace) of an XMP packet, written as
/// attributes (`GPano:PoseHeadingDegrees="90"`) or elements (`<GPano:…>90</GPano:…>`) under
/// whatever prefix the packet binds the namespace to.
struct PhotoSphereXMP {
    private let text: Substring
    private let prefix: String

    static let namespace = "http://ns.google.com/photos/1.0/panorama/"

    init(_ bytes: [UInt8]) {
        let whole = String(decoding: bytes.prefix(ImageMetadata.maxXMPBytes), as: UTF8.self)
        text = Substring(whole)
        prefix = Self.prefix(in: whole) ?? "GPano"
    }

    /// The prefix `xmlns:prefix="…panorama/"` binds.
    private static func prefix(in text: String) -> String? {
        guard let binding = text.firstRange(of: "=\"\(namespace)\"") ?? text.firstRange(of: "='\(namespace)'") else { return nil }
        let before = text[..<binding.lowerBound]
        guard let colon = before.lastIndex(of: ":"), before[..<colon].hasSuffix("xmlns") else { return nil }
        let name = before[before.index(after: colon)...]
        return name.isEmpty || name.contains(where: { $0 == " " || $0 == "\n" }) ? nil : String(name)
    }

    /// The property's text; nil when it is not there.
    func text(_ property: String) -> String? {
        let name = "\(prefix):\(property)"
        var searched = text[...]
        while let found = searched.firstRange(of: name) {
            let after = searched[found.upperBound...]
            searched = after
            // Not a longer name that starts the same.
            guard let next = after.first, !next.isLetter, !next.isNumber else { continue }
            let value = after.drop(while: \.isWhitespace)
            if value.first == "=" {
                let quoted = value.dropFirst().drop(while: \.isWhitespace)
                guard let mark = quoted.first, mark == "\"" || mark == "'" else { continue }
                return Self.trimmed(quoted.dropFirst().prefix { $0 != mark })
            }
            if value.first == ">" { return Self.trimmed(value.dropFirst().prefix { $0 != "<" }) }
        }
        return nil
    }

    private static func trimmed(_ value: Substring) -> String {
        let start = value.drop(while: \.isWhitespace)
        return String(start[..<(start.lastIndex { !$0.isWhitespace }.map(start.index(after:)) ?? start.startIndex)])
    }

    func number(_ property: String) -> Double? { text(property).flatMap(Double.init) }

    func integer(_ property: String) -> Int? {
        guard let value = number(property), value.isFinite, value >= 0, value < 1e9, value == value.rounded() else { return nil }
        return Int(value)
    }
}

