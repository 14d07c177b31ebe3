import Testing
@testable import NTImagePreviews

@Suite struct JPEGPreviewTests {
    @Test func aPreviewHasTheWidthAskedAndTheSourcesAspectRatio() throws {
        let source = try JPEGPreview.placeholder(width: 4096, height: 2048, quality: 90)
        for width in [320, 1024, 4096] {
            let preview = try JPEGPreview.make(from: source, width: width, quality: 80, maxSourcePixels: 1 << 26)
            let size = try #require(JPEGPreview.dimensions(of: preview))
            #expect(size.width == width && size.height == width / 2)
        }
    }

    @Test func aPreviewIsNeverWiderThanItsSource() throws {
        let source = try JPEGPreview.placeholder(width: 200, height: 100, quality: 90)
        let preview = try JPEGPreview.make(from: source, width: 1024, quality: 80, maxSourcePixels: 1 << 26)
        #expect(JPEGPreview.dimensions(of: preview)?.width == 200)
    }

    @Test func theSourceIsDecodedAtTheSmallestScaleStillWideEnough() {
        // 8192 → 1024 is exactly 1/8; 8192 → 320 also decodes at 1/8 (1024) and is averaged
        // from there; 8192 → 4096 at 1/2; 5000 → 1024 at 1/4 (1250), as 1/8 (625) is too narrow.
        #expect(JPEGPreview.scaled(8192, JPEGPreview.decodeScale(sourceWidth: 8192, target: 1024)) == 1024)
        #expect(JPEGPreview.scaled(8192, JPEGPreview.decodeScale(sourceWidth: 8192, target: 320)) == 1024)
        #expect(JPEGPreview.scaled(8192, JPEGPreview.decodeScale(sourceWidth: 8192, target: 4096)) == 4096)
        #expect(JPEGPreview.scaled(5000, JPEGPreview.decodeScale(sourceWidth: 5000, target: 1024)) == 1250)
    }

    @Test func areaAveragingAveragesEverySourcePixelItCovers() {
        // A 4×2 image of two 2×2 blocks, black and white, to 2×1: one black, one white pixel;
        // to 1×1: the mean grey.
        let black: [UInt8] = [0, 0, 0], white: [UInt8] = [255, 255, 255]
        let row = black + black + white + white
        let source = row + row
        let resize = { (to: Image) in source.withUnsafeBufferPointer { AreaAverage.resize($0.baseAddress!, stride: 12, from: Image(width: 4, height: 2), to: to) } }
        #expect(resize(Image(width: 2, height: 1)) == black + white)
        #expect(resize(Image(width: 1, height: 1)) == [128, 128, 128])
        // Every destination index covers at least one source index, and together they cover all.
        for (source, destination) in [(1024, 320), (7, 3), (3, 3), (100, 1)] {
            let spans = (0..<destination).map { AreaAverage.span($0, source, destination) }
            #expect(spans.allSatisfy { !$0.isEmpty && $0.upperBound <= source })
            #expect(spans.first?.lowerBound == 0 && spans.last?.upperBound == source)
        }
    }

    @Test func anImageLargerThanAllowedIsRefusedBeforeDecoding() throws {
        let source = try JPEGPreview.placeholder(width: 400, height: 200, quality: 50)
        #expect(throws: PreviewError.self) { try JPEGPreview.make(from: source, width: 100, quality: 80, maxSourcePixels: 400 * 200 - 1) }
    }

    @Test func everyPanoramaGetsItsThumbnailWhateverItsWidth() throws {
        // 1/8 is the smallest DCT scale: an 8K panorama decodes to 1024 × 512 for a 320-wide
        // thumbnail, 3.2 times as wide as the preview, and that is a preview, not a refusal.
        for (width, height) in [(8192, 4096), (7680, 3840), (16384, 8192)] {
            let source = try JPEGPreview.placeholder(width: width, height: height, quality: 50)
            let thumbnail = try JPEGPreview.make(from: source, width: 320, quality: 80, maxSourcePixels: 1 << 28)
            #expect(JPEGPreview.dimensions(of: thumbnail)?.width == 320 && JPEGPreview.dimensions(of: thumbnail)?.height == 160, "\(width) × \(height)")
        }
    }

    @Test func anImageOfAnyShapeIsDecodedWithinTheBudgetOrRefusedByIt() throws {
        let tall = try JPEGPreview.placeholder(width: 200, height: 3000, quality: 50)
        #expect(JPEGPreview.dimensions(of: try JPEGPreview.make(from: tall, width: 200, quality: 80, maxSourcePixels: 1 << 26))?.height == 3000)
        // The budget, not the shape, refuses: 600,000 pixels decoded are 1.7 MiB.
        #expect(throws: PreviewError.self) {
            try JPEGPreview.make(from: tall, width: 200, quality: 80, maxSourcePixels: 1 << 26, budget: DecodeBudget(maxBytes: 1 << 20, maxScans: 64))
        }
    }

    @Test func bytesThatAreNotAJPEGAreAnErrorNotACrash() {
        #expect(throws: PreviewError.self) { try JPEGPreview.make(from: Array("not a jpeg".utf8), width: 100, quality: 80, maxSourcePixels: 1 << 26) }
        #expect(throws: PreviewError.self) { try JPEGPreview.make(from: [], width: 100, quality: 80, maxSourcePixels: 1 << 26) }
        #expect(JPEGPreview.dimensions(of: [0xff, 0xd8, 0xff]) == nil)
    }

    @Test func aTruncatedJPEGStillGivesAPreview() throws {
        let source = try JPEGPreview.placeholder(width: 1024, height: 512, quality: 90)
        let preview = try JPEGPreview.make(from: Array(source.prefix(source.count * 2 / 3)), width: 320, quality: 80, maxSourcePixels: 1 << 26)
        #expect(JPEGPreview.dimensions(of: preview)?.width == 320)
    }
}
