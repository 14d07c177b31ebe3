import CNTTurboJPEG

/// Panoramas as cameras and phones tag them: JPEGs with EXIF orientation and Photo Sphere XMP
/// (Google's GPano: a partial panorama's crop, the heading of its centre), and that XMP for a
/// PNG or HEIC.
public enum PhotoSphereFixture {
    /// Where a partial panorama lies on its whole sphere, in the XMP's pixels.
    public struct Crop: Sendable {
        public var fullWidth, fullHeight, left, top, width, height: Int
        public init(fullWidth: Int, fullHeight: Int, left: Int, top: Int, width: Int, height: Int) {
            (self.fullWidth, self.fullHeight, self.left, self.top, self.width, self.height) = (fullWidth, fullHeight, left, top, width, height)
        }
    }

    /// An RGB JPEG whose pixel at (x, y) is `pixel(x, y)` (4:4:4, so colours stay sharp).
    public static func jpeg(width: Int, height: Int, quality: Int = 92, pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let (red, green, blue) = pixel(x, y)
                (rgb[(y * width + x) * 3], rgb[(y * width + x) * 3 + 1], rgb[(y * width + x) * 3 + 2]) = (red, green, blue)
            }
        }
        let handle = tjInitCompress()
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = tjCompress2(handle, rgb, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), &output, &size,
                                 Int32(TJSAMP_444.rawValue), Int32(quality), 0)
        precondition(status == 0, "libjpeg-turbo could not write the test's JPEG")
        defer { tjFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// An XMP packet with the GPano properties given, as attributes (as Google's camera writes
    /// them) or as elements (as other tools do), under `prefix`.
    public static func xmp(crop: Crop? = nil, heading: Double? = nil, projection: String? = "equirectangular",
                           elements: Bool = false, prefix: String = "GPano") -> String {
        var properties: [(String, String)] = []
        if let projection { properties.append(("ProjectionType", projection)) }
        if let crop {
            properties += [("FullPanoWidthPixels", "\(crop.fullWidth)"), ("FullPanoHeightPixels", "\(crop.fullHeight)"),
                           ("CroppedAreaLeftPixels", "\(crop.left)"), ("CroppedAreaTopPixels", "\(crop.top)"),
                           ("CroppedAreaImageWidthPixels", "\(crop.width)"), ("CroppedAreaImageHeightPixels", "\(crop.height)")]
        }
        if let heading { properties.append(("PoseHeadingDegrees", "\(heading)")) }
        let open = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" xmlns:\(prefix)=\"http://ns.google.com/photos/1.0/panorama/\""
        let body = elements
            ? ">" + properties.map { "<\(prefix):\($0.0)>\($0.1)</\(prefix):\($0.0)>" }.joined() + "</rdf:Description>"
            : properties.map { "\n  \(prefix):\($0.0)=\"\($0.1)\"" }.joined() + "/>"
        return "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>" + open + body + "</rdf:RDF></x:xmpmeta><?xpacket end=\"w\"?>"
    }

    /// EXIF (TIFF, little-endian) whose first directory holds Orientation `value`.
    public static func exif(orientation value: Int) -> [UInt8] {
        func short(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func long(_ v: Int) -> [UInt8] { short(v & 0xFFFF) + short(v >> 16) }
        return Array("II".utf8) + short(42) + long(8) + short(1) + short(0x0112) + short(3) + long(1) + short(value) + short(0) + long(0)
    }

    /// EXIF (TIFF, big-endian, as many cameras write it) whose Exif directory holds
    /// DateTimeOriginal `taken` ("YYYY:MM:DD HH:MM:SS").
    public static func exif(taken: String) -> [UInt8] {
        func short(_ v: Int) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func long(_ v: Int) -> [UInt8] { short(v >> 16) + short(v & 0xFFFF) }
        // Header (8), IFD0 at 8 with one entry (2 + 12 + 4 = 18), the Exif IFD at 26 with one
        // entry (18), its 20-byte ASCII value at 44.
        let ifd0 = short(1) + short(0x8769) + short(4) + long(1) + long(26) + long(0)
        let exifIFD = short(1) + short(0x9003) + short(2) + long(20) + long(44) + long(0)
        return Array("MM".utf8) + short(42) + long(8) + ifd0 + exifIFD + Array(taken.utf8) + [0]
    }

    /// `jpeg` with APP1 segments of EXIF (`exif`) and XMP (`xmp`) after its SOI.
    public static func tagged(_ jpeg: [UInt8], exif: [UInt8]? = nil, xmp: String? = nil) -> [UInt8] {
        func app1(_ body: [UInt8]) -> [UInt8] { [0xFF, 0xE1, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body }
        var segments: [UInt8] = []
        if let exif { segments += app1(Array("Exif\0\0".utf8) + exif) }
        if let xmp { segments += app1(Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(xmp.utf8)) }
        return Array(jpeg.prefix(2)) + segments + jpeg.dropFirst(2)
    }
}
