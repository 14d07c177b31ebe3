import CNTTurboJPEG
import Testing
import TestSupport
@testable import NTImagePreviews

/// PNG panoramas become the same previews and tiles as JPEGs, under the same budgets, every
/// refusal made from the header before a pixel is decoded.
@Suite struct PNGPreviewTests {
    /// Left half red, right half blue.
    private static func halves(width: Int, height: Int) -> [UInt8] {
        PNGFixture.make(width: width, height: height) { x, _ in x < width / 2 ? (220, 20, 20) : (20, 20, 220) }
    }

    /// A JPEG's RGB pixels, decoded with libjpeg-turbo.
    static func pixels(_ jpeg: [UInt8]) throws -> (width: Int, height: Int, rgb: [UInt8]) {
        let (width, height) = try #require(JPEGPreview.dimensions(of: jpeg))
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        let status = rgb.withUnsafeMutableBufferPointer { tjDecompress2(handle, jpeg, UInt(jpeg.count), $0.baseAddress, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), 0) }
        #expect(status == 0)
        return (width, height, rgb)
    }

    @Test func aPNGsPreviewIsAJPEGOfItsPixelsAtTheWidthAsked() throws {
        let png = Self.halves(width: 800, height: 400)
        let plan = try png.withUnsafeBytes { try ImagePreview.plan(.png, $0, width: 200, maxSourcePixels: 1 << 24) }
        #expect(plan.memoryBytes >= 800 * 400 * 3)
        let preview = try #require(try png.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: 90) }[200])
        let (width, height, rgb) = try Self.pixels(preview)
        #expect(width == 200 && height == 100)
        let left = Array(rgb[(50 * width + 40) * 3..<(50 * width + 40) * 3 + 3])
        let right = Array(rgb[(50 * width + 160) * 3..<(50 * width + 160) * 3 + 3])
        #expect(left[0] > 180 && left[2] < 60, "\(left)")
        #expect(right[2] > 180 && right[0] < 60, "\(right)")
    }

    /// A transparent pixel is drawn onto the matte asked: black for a panorama (the default),
    /// white for a logo; an opaque one stays as it is.
    @Test func transparentPixelsAreDrawnOntoTheMatteAsked() throws {
        let png = PNGFixture.withAlpha(width: 200, height: 100) { x, _ in x < 100 ? (20, 20, 220, 0) : (20, 20, 220, 255) }
        let plan = try png.withUnsafeBytes { try ImagePreview.plan(.png, $0, width: 200, maxSourcePixels: 1 << 24) }
        for (matte, clear) in [(Matte.black, 0...40), (Matte.white, 215...255)] {
            let made = try #require(try png.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: 90, matte: matte) }[200])
            let (width, _, rgb) = try Self.pixels(made)
            let transparent = Array(rgb[(50 * width + 30) * 3..<(50 * width + 30) * 3 + 3])
            let opaque = Array(rgb[(50 * width + 170) * 3..<(50 * width + 170) * 3 + 3])
            #expect(transparent.allSatisfy { clear.contains(Int($0)) }, "\(matte): \(transparent)")
            #expect(opaque[2] > 180 && opaque[0] < 60, "\(matte): \(opaque)")
        }
    }

    /// A 16-bit PNG that says nothing of its encoding is sRGB, as browsers and Pillow read it:
    /// libpng's simplified API took it as linear, and a 40 became 105 (finding 9 of "Hold at
    /// the fourth edge").
    @Test func aSixteenBitPNGThatSaysNothingIsReadAsSRGB() throws {
        let png = PNGFixture.sixteenBit(width: 64, height: 32, value: 0x2828)
        let plan = try png.withUnsafeBytes { try ImagePreview.plan(.png, $0, width: 64, maxSourcePixels: 1 << 24) }
        let preview = try #require(try png.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: 95) }[64])
        let (width, _, rgb) = try Self.pixels(preview)
        let centre = Array(rgb[(16 * width + 32) * 3..<(16 * width + 32) * 3 + 3])
        #expect(centre.allSatisfy { (37...43).contains(Int($0)) }, "\(centre)")
    }

    @Test func aPNGBombIsRefusedFromItsHeader() throws {
        // 60,000 × 30,000 claimed in a file of 60 bytes: refused by its pixels, then by the
        // memory its decoding would take, never decoded.
        let bomb = PNGFixture.claiming(width: 60_000, height: 30_000)
        #expect(bomb.count < 100)
        let pixels = #expect(throws: PreviewError.self) { try bomb.withUnsafeBytes { try ImagePreview.plan(.png, $0, width: 1024, maxSourcePixels: 16_384 * 16_384) } }
        #expect(pixels?.message.contains("60000 × 30000 image is over the") == true, "\(String(describing: pixels))")
        let memory = #expect(throws: PreviewError.self) {
            try bomb.withUnsafeBytes { try ImagePreview.plan(.png, $0, width: 1024, maxSourcePixels: .max, budget: DecodeBudget(maxBytes: 256 << 20, maxScans: 64)) }
        }
        #expect(memory?.message.contains("decoding the 60000 × 30000 PNG would take") == true, "\(String(describing: memory))")
        #expect(throws: PreviewError.self) { try bomb.withUnsafeBytes { try CubeTiler.plan(.png, $0, rule: TilingRule(minWidth: 1, maxAspectRatio: 4, maxFaceSize: 4096), maxSourcePixels: 16_384 * 16_384, budget: .standard) } }
        // Within the budgets, its missing rows are the decoder's error, not a crash.
        let short = PNGFixture.claiming(width: 64, height: 32)
        let plan = try short.withUnsafeBytes { try ImagePreview.plan(.png, $0, width: 32, maxSourcePixels: .max) }
        #expect(throws: PreviewError.self) { try short.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: 80) } }
        #expect(throws: PreviewError.self) { try [0x89, 0x50, 0x4e, 0x47, 1, 2, 3].withUnsafeBytes { try ImagePreview.plan(.png, $0, width: 32, maxSourcePixels: .max) } }
    }

    @Test func aPNGIsCutIntoTheSameCubeFacesAsAJPEG() throws {
        let png = Self.halves(width: 1024, height: 512)
        let rule = TilingRule(minWidth: 512, maxAspectRatio: 2.5, maxFaceSize: 4096)
        let plan = try #require(try png.withUnsafeBytes { try CubeTiler.plan(.png, $0, rule: rule, maxSourcePixels: 1 << 24, budget: .standard) })
        let image = try png.withUnsafeBytes { try CubeTiler.decode($0, plan) }
        #expect(image.width == 1024 && image.height == 512 && image.subsampling == Int32(TJSAMP_420.rawValue))
        // The front face looks at yaw 0, the panorama's middle column: red to its left, blue to its right.
        let front = CubeTiler.face(.front, of: image, size: plan.pyramid.faceSize)
        let tiles = try CubeTiler.tiles(of: front, quality: 90)
        #expect(!tiles.isEmpty)
        let (width, _, rgb) = try Self.pixels(try #require(tiles.first { $0.row == 0 && $0.column == 0 }).jpeg)
        let pixel = Array(rgb[(10 * width + 10) * 3..<(10 * width + 10) * 3 + 3])
        #expect(pixel[0] > 150 && pixel[2] < 100, "the front face's top left is red: \(pixel)")
    }
}
