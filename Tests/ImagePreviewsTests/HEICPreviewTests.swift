import CNTTurboJPEG
import Testing
import TestSupport
@testable import NTImagePreviews

/// HEIC panoramas (an iPhone's default) become the same previews and tiles as JPEGs; their
/// container is counted and their size read before any pixel is decoded.
@Suite struct HEICPreviewTests {
    @Test func aHEICsPreviewIsAJPEGOfItsPixelsAtTheWidthAsked() throws {
        let heic = try HEICFixture.make(width: 512, height: 256) { x, _ in x < 256 ? (220, 20, 20) : (20, 20, 220) }
        let plan = try heic.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 128, maxSourcePixels: 1 << 24) }
        let preview = try #require(try heic.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: 90) }[128])
        let (width, height, rgb) = try PNGPreviewTests.pixels(preview)
        #expect(width == 128 && height == 64)
        let left = Array(rgb[(32 * width + 20) * 3..<(32 * width + 20) * 3 + 3])
        let right = Array(rgb[(32 * width + 108) * 3..<(32 * width + 108) * 3 + 3])
        #expect(left[0] > 170 && left[2] < 80, "\(left)")
        #expect(right[2] > 170 && right[0] < 80, "\(right)")
        let tiles = try #require(try heic.withUnsafeBytes {
            try CubeTiler.plan(.heic, $0, rule: TilingRule(minWidth: 256, maxAspectRatio: 2.5, maxFaceSize: 4096), maxSourcePixels: 1 << 24, budget: .standard)
        })
        #expect(try heic.withUnsafeBytes { try CubeTiler.decode($0, tiles) }.width == 512)
    }

    /// A HEIC is decoded whole: its processing makes every width from that one decode.
    @Test func everyWidthOfAHEICComesFromOneDecode() throws {
        let heic = try HEICFixture.make(width: 512, height: 256) { x, _ in x < 256 ? (220, 20, 20) : (20, 20, 220) }
        let one = try heic.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 1024, maxSourcePixels: 1 << 24) }
        let plan = try heic.withUnsafeBytes { try ImagePreview.plan(.heic, $0, widths: [64, 128, 1024], maxSourcePixels: 1 << 24) }
        // One decoding's memory, and one preview's buffers at a time (the widest's).
        #expect(plan.memoryBytes == one.memoryBytes)
        let made = try heic.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: 90) }
        let sizes = try made.mapValues { try PNGPreviewTests.pixels($0) }.mapValues { [$0.width, $0.height] }
        #expect(sizes == [64: [64, 32], 128: [128, 64], 1024: [512, 256]])
    }

    @Test func aHEICIsRefusedForItsItemsAndItsSizeBeforeDecoding() throws {
        let heic = try HEICFixture.make(width: 256, height: 128) { _, _ in (90, 90, 90) }
        // Its container lists its items (the image, and perhaps its properties' own); none may be allowed.
        let items = try #require(heic.withUnsafeBytes { HEIFBoxes.itemCount($0) })
        #expect(items >= 1)
        let tooMany = #expect(throws: PreviewError.self) {
            try heic.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 64, maxSourcePixels: 1 << 24, budget: DecodeBudget(maxBytes: 1 << 30, maxScans: 64, maxItems: items - 1)) }
        }
        #expect(tooMany?.message.contains("more than the \(items - 1) an image may have") == true, "\(String(describing: tooMany))")
        let tooLarge = #expect(throws: PreviewError.self) { try heic.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 64, maxSourcePixels: 256 * 127) } }
        #expect(tooLarge?.message.contains("256 × 128 image is over") == true)
        let memory = #expect(throws: PreviewError.self) {
            try heic.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 64, maxSourcePixels: 1 << 24, budget: DecodeBudget(maxBytes: 1 << 20, maxScans: 64)) }
        }
        #expect(memory?.message.contains("decoding the 256 × 128 HEIC would take") == true)
        // Not a HEIC, a truncated one, a meta box that lies about its size: errors, not crashes.
        #expect(throws: PreviewError.self) { try [0, 0, 0, 8, 0x66, 0x74, 0x79, 0x70].withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 64, maxSourcePixels: .max) } }
        let truncated = Array(heic.prefix(heic.count / 2))
        #expect(throws: PreviewError.self) {
            let plan = try truncated.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 64, maxSourcePixels: .max) }
            _ = try truncated.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: 80) }
        }
        // A grid of 5,000 tiles, by its container's word: refused before libheif reads it.
        let grid = HEICFixture.claiming(items: 5_000)
        #expect(grid.withUnsafeBytes { HEIFBoxes.itemCount($0) } == 5_000)
        let refused = #expect(throws: PreviewError.self) { try grid.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 64, maxSourcePixels: .max) } }
        #expect(refused?.message.contains("holds 5000 images") == true, "\(String(describing: refused))")
        var lying = heic
        lying.replaceSubrange(0..<4, with: [0xff, 0xff, 0xff, 0xff])
        #expect(lying.withUnsafeBytes { HEIFBoxes.itemCount($0) } == nil)
    }

    /// A grid is decoded at the size its grid says, whatever its `ispe` claims: a 476-byte file
    /// whose `ispe` said 128 × 128 over a 30,000 × 30,000 grid took the daemon to 5.3 GB
    /// (issue "Hold at the fourth edge", finding 5). Budgeted from the grid, it is refused
    /// before libheif reads it; a grid that says its own size is read as any HEIC.
    @Test func aGridIsBudgetedAtTheSizeItsGridSays() throws {
        let bomb = try HEICFixture.grid(width: 30_000, height: 30_000, claimed: 128)
        #expect(bomb.count < 2_000)
        for maxSourcePixels in [Int.max, 16_384 * 16_384] {
            let refused = #expect(throws: PreviewError.self) {
                try bomb.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 64, maxSourcePixels: maxSourcePixels) }
            }
            #expect(refused?.message.contains("30000 × 30000") == true, "\(String(describing: refused))")
        }
        let rule = TilingRule(minWidth: 64, maxAspectRatio: 4, maxFaceSize: 4096)
        #expect(throws: PreviewError.self) { try bomb.withUnsafeBytes { try CubeTiler.plan(.heic, $0, rule: rule, maxSourcePixels: .max, budget: .standard) } }
        // A grid of its own size: planned at that size and drawn from its tile.
        let honest = try HEICFixture.grid(width: 64, height: 64, claimed: 64)
        let plan = try honest.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 32, maxSourcePixels: .max) }
        let preview = try #require(try honest.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: 90) }[32])
        let pixels = try PNGPreviewTests.pixels(preview)
        #expect(pixels.width == 32 && pixels.height == 32)
        // A grid whose ispe claims more than its grid: budgeted at the larger of the two.
        let larger = try HEICFixture.grid(width: 64, height: 64, claimed: 20_000)
        #expect(throws: PreviewError.self) { try larger.withUnsafeBytes { try ImagePreview.plan(.heic, $0, width: 32, maxSourcePixels: 1 << 24) } }
    }
}
