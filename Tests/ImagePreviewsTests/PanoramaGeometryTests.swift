import Testing
import TestSupport
@testable import NTImagePreviews

/// A panorama's own geometry (issue "Panoramas as iPhones make them"): EXIF orientation and the
/// Photo Sphere XMP crop and heading, read from the headers and drawn into previews and tiles:
/// a partial panorama where it lies on the sphere, the rest dark; a turned image upright.
@Suite struct PanoramaGeometryTests {
    static let red: (UInt8, UInt8, UInt8) = (220, 20, 20), blue: (UInt8, UInt8, UInt8) = (20, 20, 220)
    /// A 180° × 90° crop at the sphere's centre, of a 2048 × 1024 panorama.
    static let centre = PhotoSphereFixture.Crop(fullWidth: 2048, fullHeight: 1024, left: 512, top: 256, width: 1024, height: 512)

    private static func geometry(_ bytes: [UInt8], as format: ImageFormat = .jpeg) -> PanoramaGeometry {
        bytes.withUnsafeBytes { PanoramaGeometry.read(format, $0, maxItems: 1024) }
    }

    private static func preview(_ bytes: [UInt8], as format: ImageFormat = .jpeg, width: Int) throws -> (width: Int, height: Int, rgb: [UInt8]) {
        let plan = try bytes.withUnsafeBytes { try ImagePreview.plan(format, $0, width: width, maxSourcePixels: 1 << 26) }
        return try PNGPreviewTests.pixels(try #require(try bytes.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: 92) }[width]))
    }

    /// The colour at (x, y): red, blue, dark, or other.
    private static func colour(_ image: (width: Int, height: Int, rgb: [UInt8]), _ x: Int, _ y: Int) -> String {
        let at = (y * image.width + x) * 3
        let (r, g, b) = (Int(image.rgb[at]), Int(image.rgb[at + 1]), Int(image.rgb[at + 2]))
        if r > 160 && b < 80 && g < 80 { return "red" }
        if b > 160 && r < 80 && g < 80 { return "blue" }
        if r < 30 && g < 30 && b < 30 { return "dark" }
        return "other(\(r),\(g),\(b))"
    }

    @Test func theXMPsCropAndHeadingAreReadAsCamerasAndToolsWriteThem() throws {
        let jpeg = PhotoSphereFixture.jpeg(width: 64, height: 32) { _, _ in Self.red }
        for (elements, prefix) in [(false, "GPano"), (true, "GPano"), (false, "pano")] {
            let xmp = PhotoSphereFixture.xmp(crop: Self.centre, heading: -90, elements: elements, prefix: prefix)
            let read = Self.geometry(PhotoSphereFixture.tagged(jpeg, xmp: xmp))
            #expect(read.crop == PanoramaCrop(fullWidth: 2048, fullHeight: 1024, left: 512, top: 256, width: 1024, height: 512), "\(elements) \(prefix)")
            #expect(read.heading == 270 && read.projection == "equirectangular" && read.orientation == nil)
        }
        // A crop that does not fit its sphere, or of another projection, is not drawn; the
        // heading still counts. Nothing at all: the whole sphere, no heading.
        let outside = PhotoSphereFixture.Crop(fullWidth: 2048, fullHeight: 1024, left: 0, top: 600, width: 1024, height: 512)
        #expect(Self.geometry(PhotoSphereFixture.tagged(jpeg, xmp: PhotoSphereFixture.xmp(crop: outside, heading: 10))).crop == nil)
        let cylinder = Self.geometry(PhotoSphereFixture.tagged(jpeg, xmp: PhotoSphereFixture.xmp(crop: Self.centre, heading: 10, projection: "cylindrical")))
        #expect(cylinder.crop == nil && cylinder.heading == 10 && cylinder.projection == "cylindrical")
        #expect(Self.geometry(jpeg) == .whole && Self.geometry(Array(jpeg.prefix(40))) == .whole)
    }

    /// When it was taken, for the walk's order: EXIF's DateTimeOriginal as the camera wrote it.
    @Test func theCaptureTimeIsExifsDateTimeOriginal() {
        let jpeg = PhotoSphereFixture.jpeg(width: 64, height: 32) { _, _ in Self.red }
        let taken = { (exif: [UInt8]) in PhotoSphereFixture.tagged(jpeg, exif: exif).withUnsafeBytes { CaptureTime.read(.jpeg, $0, maxItems: 1024) } }
        #expect(taken(PhotoSphereFixture.exif(taken: "2026:12:01 10:22:33")) == "2026-12-01T10:22:33")
        // Not a date (a camera's blank "0000:00:00 00:00:00", a month 13, letters), cut short, or none at all: none.
        for odd in ["0000:00:00 00:00:00", "2026:13:01 10:22:33", "2026:12:01 1O:22:33", "2026-12-01 10:22:33"] {
            #expect(taken(PhotoSphereFixture.exif(taken: odd)) == nil, "\(odd)")
        }
        #expect(taken(Array(PhotoSphereFixture.exif(taken: "2026:12:01 10:22:33").prefix(50))) == nil)
        #expect(taken(PhotoSphereFixture.exif(orientation: 6)) == nil)
    }

    @Test func exifOrientationIsReadInEitherByteOrder() {
        let jpeg = PhotoSphereFixture.jpeg(width: 64, height: 32) { _, _ in Self.red }
        for value in 1...8 {
            let read = Self.geometry(PhotoSphereFixture.tagged(jpeg, exif: PhotoSphereFixture.exif(orientation: value)))
            #expect(read.orientation?.rawValue == value)
        }
        // Big-endian ("MM"), as some cameras write it.
        let bigEndian: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
        #expect(Self.geometry(PhotoSphereFixture.tagged(jpeg, exif: bigEndian)).orientation == .right)
        // Out of range, or cut short: none (drawn as stored).
        #expect(Self.geometry(PhotoSphereFixture.tagged(jpeg, exif: PhotoSphereFixture.exif(orientation: 9))).orientation == nil)
        #expect(Self.geometry(PhotoSphereFixture.tagged(jpeg, exif: Array(PhotoSphereFixture.exif(orientation: 6).prefix(12)))).orientation == nil)
    }

    @Test func aPNGsAndAHEICsXMPIsRead() throws {
        let xmp = PhotoSphereFixture.xmp(crop: Self.centre, heading: 45)
        let png = PNGFixture.tagged(PNGFixture.make(width: 64, height: 32) { _, _ in Self.red }, xmp: xmp)
        let heic = try HEICFixture.make(width: 64, height: 32, xmp: xmp) { _, _ in Self.red }
        for (format, bytes) in [(ImageFormat.png, png), (.heic, heic)] {
            let read = Self.geometry(bytes, as: format)
            #expect(read.heading == 45 && read.crop?.width == 1024, "\(format)")
        }
        // A HEIC holding more images than its decoding may: not read at all.
        #expect(heic.withUnsafeBytes { PanoramaGeometry.read(.heic, $0, maxItems: 0) } == .whole)
    }

    /// A 1024 × 512 image of the sphere's middle 180° × 90° (red left, blue right): its 800-wide
    /// preview is the whole sphere, 800 × 400, the image in its middle 400 × 200, the rest dark.
    @Test func aPartialPanoramaIsDrawnWhereItLiesOnTheSphereTheRestDark() throws {
        let image = PhotoSphereFixture.jpeg(width: 1024, height: 512) { x, _ in x < 512 ? Self.red : Self.blue }
        for (format, bytes) in [(ImageFormat.jpeg, PhotoSphereFixture.tagged(image, xmp: PhotoSphereFixture.xmp(crop: Self.centre))),
                                (.png, PNGFixture.tagged(PNGFixture.make(width: 1024, height: 512) { x, _ in x < 512 ? Self.red : Self.blue },
                                                         xmp: PhotoSphereFixture.xmp(crop: Self.centre)))] {
            let preview = try Self.preview(bytes, as: format, width: 800)
            #expect(preview.width == 800 && preview.height == 400, "\(format)")
            #expect([Self.colour(preview, 210, 200), Self.colour(preview, 590, 200)] == ["red", "blue"], "\(format)")
            #expect([Self.colour(preview, 100, 200), Self.colour(preview, 700, 200), Self.colour(preview, 400, 50), Self.colour(preview, 400, 350)]
                    == ["dark", "dark", "dark", "dark"], "\(format)")
        }
        // Never wider than the sphere the image makes: a 1024-wide crop of half the sphere is 2048.
        let wide = try Self.preview(PhotoSphereFixture.tagged(image, xmp: PhotoSphereFixture.xmp(crop: Self.centre)), width: 4096)
        #expect(wide.width == 2048 && wide.height == 1024)
    }

    /// An image stored turned (EXIF orientation 3: upside down; 6: on its side) is drawn upright:
    /// red on the left, blue on the right.
    @Test func aTurnedImageIsDrawnUpright() throws {
        let upsideDown = PhotoSphereFixture.jpeg(width: 400, height: 200) { x, _ in x < 200 ? Self.blue : Self.red }
        let onItsSide = PhotoSphereFixture.jpeg(width: 200, height: 400) { _, y in y < 200 ? Self.blue : Self.red }
        for (value, stored) in [(3, upsideDown), (6, onItsSide)] {
            let preview = try Self.preview(PhotoSphereFixture.tagged(stored, exif: PhotoSphereFixture.exif(orientation: value)), width: 200)
            #expect(preview.width == 200 && preview.height == 100, "orientation \(value)")
            #expect([Self.colour(preview, 20, 50), Self.colour(preview, 180, 50)] == ["red", "blue"], "orientation \(value)")
        }
    }

    /// The tiles of a partial panorama: its cube is the whole sphere's, the image on the front
    /// face (the sphere's middle), the back face dark.
    @Test func aPartialPanoramasTilesAreCutFromItsSphere() throws {
        let image = PhotoSphereFixture.jpeg(width: 1024, height: 512) { _, _ in Self.red }
        let tagged = PhotoSphereFixture.tagged(image, xmp: PhotoSphereFixture.xmp(crop: Self.centre))
        let rule = TilingRule(minWidth: 2000, maxAspectRatio: 4, maxFaceSize: 4096)
        // 1024 wide itself, a 2048-wide sphere: tiled as that.
        let plan = try #require(try tagged.withUnsafeBytes { try CubeTiler.plan(.jpeg, $0, rule: rule, maxSourcePixels: 1 << 24, budget: .standard) })
        #expect(plan.pyramid == TilePyramid(panoramaWidth: 2048) && plan.geometry.crop != nil)
        let planes = try tagged.withUnsafeBytes { try CubeTiler.decode($0, plan) }
        for (face, expected) in [(CubeFace.front, "red"), (.back, "dark"), (.up, "dark")] {
            let cut = CubeTiler.face(face, of: planes, size: plan.pyramid.faceSize, geometry: plan.geometry)
            let tile = try #require(try CubeTiler.tiles(of: cut, quality: 92).first { $0.row == 0 && $0.column == 0 })
            let pixels = try PNGPreviewTests.pixels(tile.jpeg)
            #expect(Self.colour(pixels, pixels.width - 1, pixels.height - 1) == expected, "\(face)")
        }
    }

    /// A pyramid is sized from the pixels the file has: a 256 × 128 JPEG whose GPano claimed a
    /// 65,536-wide sphere was cut into 2,056 tiles over half a minute (finding 6 of "Hold at
    /// the fourth edge"). A crop is tiled as its sphere while that sphere holds at most
    /// `maxSpherePerImagePixel` (4) times its pixels, and at that size beyond.
    @Test func aCropsPyramidComesFromItsPixelsNotItsClaimedSphere() throws {
        let rule = TilingRule(minWidth: 2000, maxAspectRatio: 4, maxFaceSize: 8192)
        let small = PhotoSphereFixture.jpeg(width: 256, height: 128) { _, _ in (200, 30, 30) }
        let claiming = PhotoSphereFixture.tagged(small, xmp: PhotoSphereFixture.xmp(crop: .init(fullWidth: 65_536, fullHeight: 32_768, left: 0, top: 16_320,
                                                                                                   width: 256, height: 128)))
        #expect(try claiming.withUnsafeBytes { try CubeTiler.plan(.jpeg, $0, rule: rule, maxSourcePixels: 1 << 28, budget: .standard) } == nil)
        // A wide strip of a larger sphere: its pyramid no larger than its own pixels allow.
        let strip = PhotoSphereFixture.jpeg(width: 4096, height: 512) { _, _ in (200, 30, 30) }
        let tagged = PhotoSphereFixture.tagged(strip, xmp: PhotoSphereFixture.xmp(crop: .init(fullWidth: 65_536, fullHeight: 32_768, left: 0, top: 16_000,
                                                                                              width: 4096, height: 512)))
        let plan = try #require(try tagged.withUnsafeBytes { try CubeTiler.plan(.jpeg, $0, rule: rule, maxSourcePixels: 1 << 28, budget: .standard) })
        // 4 × its 2 Mpx: a sphere of 8 Mpx, 4096 wide, where GPano claimed one of 2 Gpx.
        #expect(plan.pyramid == TilePyramid(panoramaWidth: 4096), "\(plan.pyramid)")
    }
}
