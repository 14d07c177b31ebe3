import Foundation
import Testing
import TestSupport
@testable import NoughtyTours

/// What a capture takes is an image by its bytes, with its dimensions: the pure check the
/// capture and `tours panorama add` run before anything is stored or queued.
@Suite struct ImageContentTests {
    private func inspect(_ bytes: [UInt8], as name: String) -> Result<ImageContent, NoughtyToursError> {
        ImageContent.inspect(name: name, size: Int64(bytes.count)) { offset, count in
            guard offset < bytes.count else { return [] }
            return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
        }
    }

    private func reason(_ result: Result<ImageContent, NoughtyToursError>) -> String? {
        guard case .failure(.invalidInput(let reason)) = result else { return nil }
        return reason
    }

    @Test func eachFormatIsReadWithItsDimensions() {
        #expect(inspect(ImageSignature.jpeg + [1, 2, 3], as: "a.jpg") == .success(ImageContent(format: .jpeg, width: 4096, height: 2048)))
        #expect(inspect(ImageSignature.png, as: "a.PNG") == .success(ImageContent(format: .png, width: 4096, height: 2048)))
        #expect(inspect(ImageSignature.heic, as: "a.heic") == .success(ImageContent(format: .heic, width: 4096, height: 2048)))
    }

    /// The repository's example panorama, a real JPEG: its frame header comes after JFIF and
    /// quantisation tables, which the walk steps over.
    @Test func theShippedExampleIsAJPEGOf2048By1024() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../examples/pano.jpg").standardized
        #expect(ImageContent.inspect(file: example.path, name: "pano.jpg") == .success(ImageContent(format: .jpeg, width: 2048, height: 1024)))
    }

    @Test func segmentsBeforeTheFrameHeaderAreSteppedOver() {
        let exif: [UInt8] = [0xFF, 0xE1, 0x01, 0x02] + [UInt8](repeating: 0x45, count: 0x100)
        let frame: [UInt8] = [0xFF, 0xC2, 0x00, 0x11, 0x08, 0x00, 0x40, 0x00, 0x80, 0x03] // progressive, 128×64
        #expect(inspect([0xFF, 0xD8] + exif + [0xFF, 0xFF] + frame, as: "p.jpeg") == .success(ImageContent(format: .jpeg, width: 128, height: 64)))
    }

    @Test func whatIsNotAnImageIsRefusedWithTheReason() {
        #expect(reason(inspect([], as: "empty.jpg"))?.contains("empty") == true)
        #expect(reason(inspect(Array("# README\nhello".utf8), as: "readme.jpg"))?.contains("not a JPEG, HEIC or PNG image (it starts with hex 2320524541444d45)") == true)
        #expect(reason(inspect(ImageSignature.png, as: "shot.jpg"))?.contains("holds a PNG image, but its name says JPEG") == true)
        #expect(reason(inspect(ImageSignature.jpeg, as: "notes.txt"))?.contains("not notes.txt") == true)
        // A signature with no frame header after it: random bytes behind FF D8 FF.
        #expect(reason(inspect([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + [UInt8](repeating: 0, count: 14) + [0xFF, 0xDA, 0, 2], as: "a.jpg"))?.contains("gives no width and height") == true)
        #expect(reason(inspect(Array(ImageSignature.png.prefix(16)), as: "a.png"))?.contains("gives no width and height") == true)
        #expect(reason(inspect(Array(ImageSignature.heic.prefix(24)), as: "a.heic"))?.contains("gives no width and height") == true)
        var zero = ImageSignature.jpeg
        zero.replaceSubrange(7..<11, with: [0, 0, 0, 0])
        #expect(reason(inspect(zero, as: "a.jpg"))?.contains("0×0") == true)
    }

    /// A segment length of zero or boxes that point past the file end the walk: no loop.
    @Test func malformedLengthsEndTheWalk() {
        #expect(reason(inspect([0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x00], as: "a.jpg")) != nil)
        let endless: [UInt8] = Array(ImageSignature.heic.prefix(24)) + [0x00, 0x00, 0x00, 0x08] + Array("free".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + Array("meta".utf8)
        #expect(reason(inspect(endless, as: "a.heic")) != nil)
        // A 64-bit box size with its top bit set, and an ispe of 2^32 - 1 squared: refused or
        // read, never a trap.
        let huge: [UInt8] = Array(ImageSignature.heic.prefix(24)) + [0, 0, 0, 1] + Array("meta".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(reason(inspect(huge, as: "a.heic")) != nil)
        var widest = ImageSignature.heic
        widest.replaceSubrange(64..<72, with: [UInt8](repeating: 0xFF, count: 8))
        #expect(inspect(widest, as: "a.heic") == .success(ImageContent(format: .heic, width: 4_294_967_295, height: 4_294_967_295)))
    }
}
