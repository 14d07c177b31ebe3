import Testing
import TestSupport
@testable import NTImagePreviews

/// The markers read before decoding, and the budget they are held to (the probe's image bomb:
/// a 1.7 MB progressive JPEG asking for a 1.6 GB coefficient buffer and 150 passes over it).
@Suite struct DecodeBudgetTests {
    private func structure(_ bytes: [UInt8]) -> JPEGStructure? { bytes.withUnsafeBytes { JPEGStructure.read($0) } }

    @Test func aBaselineJPEGIsOneScanDecodedRowByRow() throws {
        let jpeg = try JPEGPreview.flat(width: 1024, height: 512, quality: 90, grey: false)
        let read = try #require(structure(jpeg))
        #expect(read.width == 1024 && read.height == 512 && !read.progressive && read.scans == 1)
        #expect(read.components.count == 3 && read.components[0] == .init(horizontal: 2, vertical: 2))
        #expect(read.coefficientBytes == 0)
    }

    @Test func theBombsMarkersSayWhatItWouldCost() throws {
        let bomb = JPEGBomb.make(width: 23_168, height: 11_584, acScans: 150)
        #expect(bomb.count < 2_000_000)
        let read = try #require(structure(bomb))
        #expect(read.progressive && read.scans == 151)
        // 2896 × 1448 blocks of three components, 128 bytes each.
        #expect(read.coefficientBytes == 2_896 * 1_448 * 3 * 128)
        let refusal = try #require(DecodeBudget(maxBytes: 256 << 20, maxScans: 1_000).refusal(read, decodedPixels: 2_896 * 1_448))
        #expect(refusal.message.contains("MiB"))
        #expect(DecodeBudget(maxBytes: 4 << 30, maxScans: 64).refusal(read, decodedPixels: 0)?.message.contains("151 scans") == true)
        // Refused before any decoding: the whole call is the marker pass.
        #expect(throws: PreviewError.self) { try JPEGPreview.make(from: bomb, width: 1024, quality: 80, maxSourcePixels: 1 << 30) }
    }

    @Test func aSmallBombIsAValidJPEGWithinTheBudget() throws {
        // The builder makes real JPEGs: a small one decodes, so the large one's refusal is the budget's.
        let small = JPEGBomb.make(width: 512, height: 256, acScans: 6)
        let preview = try JPEGPreview.make(from: small, width: 320, quality: 80, maxSourcePixels: 1 << 26)
        #expect(JPEGPreview.dimensions(of: preview)?.width == 320)
    }

    @Test func markersThatAreNotAJPEGsReadAsNothing() {
        #expect(structure(Array("not a jpeg".utf8)) == nil)
        #expect(structure([0xFF, 0xD8, 0xFF, 0xD9]) == nil) // no frame, no scan
        #expect(structure([0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x40]) == nil) // a segment past the end
        // Cut short inside its first scan: what it has still reads.
        let jpeg = (try? JPEGPreview.placeholder(width: 256, height: 128, quality: 90)) ?? []
        #expect(structure(Array(jpeg.prefix(jpeg.count - 20)))?.scans == 1)
    }
}
