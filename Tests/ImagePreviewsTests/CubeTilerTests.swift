import CNTTurboJPEG
import Foundation
import Testing
@testable import NTImagePreviews

@Suite struct CubeTilerTests {
    @Test func aPyramidsFacesAreTheWidthOverPiInWholeBlocksHalvingToOneTile() {
        // 16384 / π ≈ 5215: five levels (320, 640, 1280, 2560, 5120), each halving exactly.
        let large = TilePyramid(panoramaWidth: 16_384)
        #expect(large.faceSize == 5120 && large.levels == 5)
        #expect((0..<5).map { large.size(ofLevel: $0) } == [320, 640, 1280, 2560, 5120])
        #expect((0..<5).map { large.tilesAcross(level: $0) } == [1, 2, 3, 5, 10])
        let medium = TilePyramid(panoramaWidth: 8192)
        #expect(medium.faceSize == 2560 && medium.levels == 4)
        let small = TilePyramid(panoramaWidth: 1000)
        #expect(small.levels == 1 && small.faceSize <= TilePyramid.tileSize && small.faceSize % 16 == 0)
        for width in [600, 1608, 1609, 3000, 6000, 6144, 12_000, 16_384, 30_000] {
            let pyramid = TilePyramid(panoramaWidth: width)
            #expect(TilePyramid(faceSize: pyramid.faceSize, levels: pyramid.levels) == pyramid, "width \(width)")
            #expect(pyramid.size(ofLevel: 0) <= TilePyramid.tileSize)
            #expect(abs(Double(pyramid.faceSize) - Double(width) / Double.pi) <= Double(16 << (pyramid.levels - 1)) / 2 + 16)
        }
        // What a stored pyramid file may not say.
        #expect(TilePyramid(faceSize: 5120, levels: 4) == nil) // level 0 would be 640: two tiles
        #expect(TilePyramid(faceSize: 5000, levels: 5) == nil) // does not halve into whole blocks
        #expect(TilePyramid(faceSize: 0, levels: 1) == nil)
    }

    @Test func tileNamesAreReadOnlyAsWritten() throws {
        #expect(TilePyramid.tileName(.up, row: 2, column: 10) == "u2_10.jpg")
        let parsed = try #require(TilePyramid.parseTileName("u2_10.jpg"))
        #expect(parsed.face == .up && parsed.row == 2 && parsed.column == 10)
        for name in ["x2_1.jpg", "f02_1.jpg", "f2_1.png", "f2-1.jpg", "f_1.jpg", "f2_.jpg", "f-1_2.jpg", "f2_1_3.jpg", "f99999_1.jpg", "f٣_1.jpg", ""] {
            #expect(TilePyramid.parseTileName(Substring(name)) == nil, "\(name)")
        }
        #expect(TilePyramid(panoramaWidth: 16_384).contains(level: 4, row: 9, column: 9))
        #expect(!TilePyramid(panoramaWidth: 16_384).contains(level: 4, row: 10, column: 0))
        #expect(!TilePyramid(panoramaWidth: 16_384).contains(level: 5, row: 0, column: 0))
    }

    /// Each face looks where its name says: an equirectangular image whose colour is the
    /// direction it shows (red to the right, green up, blue behind), cut into faces and tiles,
    /// shows in each tile the colours of the directions the viewer's script draws it at.
    @Test func everyTileShowsTheDirectionsTheViewerDrawsItAt() throws {
        let (width, height) = (2048, 1024)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            let latitude = (0.5 - (Double(y) + 0.5) / Double(height)) * Double.pi
            for x in 0..<width {
                let longitude = ((Double(x) + 0.5) / Double(width) - 0.5) * 2 * Double.pi
                let colour = Self.colour(x: sin(longitude) * cos(latitude), y: sin(latitude), z: -cos(longitude) * cos(latitude))
                pixels.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: colour)
            }
        }
        let jpeg = try JPEGPreview.encode(pixels, Image(width: width, height: height), quality: 95)
        let panorama = try jpeg.withUnsafeBytes { try CubeTiler.decode($0, maxSourcePixels: width * height, budget: .standard) }
        let pyramid = TilePyramid(panoramaWidth: width)
        #expect(pyramid.faceSize == 640 && pyramid.levels == 2)
        // Where the viewer's script puts a face's point (a, b): the same six directions.
        let directions: [CubeFace: (Double, Double) -> (Double, Double, Double)] = [
            .front: { a, b in (a, -b, -1) }, .right: { a, b in (1, -b, a) }, .back: { a, b in (-a, -b, 1) },
            .left: { a, b in (-1, -b, -a) }, .up: { a, b in (a, 1, -b) }, .down: { a, b in (a, -1, b) },
        ]
        for face in CubeFace.allCases {
            var image = CubeTiler.face(face, of: panorama, size: pyramid.faceSize)
            for level in (0..<pyramid.levels).reversed() {
                let size = pyramid.size(ofLevel: level)
                let tiles = try CubeTiler.tiles(of: image, quality: 95)
                #expect(tiles.count == pyramid.tilesAcross(level: level) * pyramid.tilesAcross(level: level))
                for tile in tiles {
                    let decoded = try Self.decode(tile.jpeg)
                    #expect(decoded.width == min(512, size - tile.column * 512) && decoded.height == min(512, size - tile.row * 512))
                    for (fx, fy) in [(0.1, 0.1), (0.5, 0.5), (0.9, 0.3), (0.2, 0.8)] {
                        let (px, py) = (Int(fx * Double(decoded.width)), Int(fy * Double(decoded.height)))
                        let a = 2 * (Double(tile.column * 512 + px) + 0.5) / Double(size) - 1
                        let b = 2 * (Double(tile.row * 512 + py) + 0.5) / Double(size) - 1
                        let d = directions[face]!(a, b)
                        let length = (d.0 * d.0 + d.1 * d.1 + d.2 * d.2).squareRoot()
                        let expected = Self.colour(x: d.0 / length, y: d.1 / length, z: d.2 / length)
                        let seen = Array(decoded.pixels[(py * decoded.width + px) * 3..<(py * decoded.width + px) * 3 + 3])
                        #expect(zip(seen, expected).allSatisfy { abs(Int($0) - Int($1)) <= 12 },
                                "face \(face) level \(level) tile \(tile.row),\(tile.column) at \(px),\(py): \(seen) for \(expected)")
                    }
                }
                if level > 0 { image = CubeTiler.halved(image) }
            }
        }
    }

    /// Every chroma subsampling a camera or an editor may write, and greyscale, is cut: tiles
    /// of the right sizes, in the source's own subsampling, showing the right directions.
    @Test(arguments: [TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440, TJSAMP_411, TJSAMP_GRAY])
    func everySubsamplingIsCut(subsampling: TJSAMP) throws {
        let (width, height) = (2400, 1200) // faces of 768: a 512 and a 256 tile across, then 384
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                // Brighter to the right of the centre (longitude 0 to 180°), darker to the left.
                let value: UInt8 = x >= width / 2 ? 220 : 40
                pixels.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: [value, value, value])
            }
        }
        let jpeg = try Self.encode(pixels, width: width, height: height, subsampling: subsampling)
        let panorama = try jpeg.withUnsafeBytes { try CubeTiler.decode($0, maxSourcePixels: width * height, budget: .standard) }
        #expect(panorama.subsampling == Int32(subsampling.rawValue))
        let pyramid = TilePyramid(panoramaWidth: width)
        for (face, expected) in [(CubeFace.right, 220), (.left, 40)] {
            var image = CubeTiler.face(face, of: panorama, size: pyramid.faceSize)
            for level in (0..<pyramid.levels).reversed() {
                for tile in try CubeTiler.tiles(of: image, quality: 90) {
                    let decoded = try Self.decode(tile.jpeg)
                    let size = pyramid.size(ofLevel: level)
                    #expect(decoded.width == min(512, size - tile.column * 512) && decoded.height == min(512, size - tile.row * 512))
                    let centre = ((decoded.height / 2) * decoded.width + decoded.width / 2) * 3
                    #expect(abs(Int(decoded.pixels[centre]) - expected) <= 12, "\(subsampling) \(face) level \(level): \(decoded.pixels[centre])")
                }
                if level > 0 { image = CubeTiler.halved(image) }
            }
        }
    }

    @Test func aPanoramaOverTheBudgetIsRefusedBeforeItsPlanesAreAllocated() throws {
        let jpeg = try JPEGPreview.flat(width: 2048, height: 1024, quality: 50, grey: false)
        // 2048 × 1024 in 4:2:0 takes 3 MiB of planes.
        #expect(throws: PreviewError.self) {
            try jpeg.withUnsafeBytes { try CubeTiler.decode($0, maxSourcePixels: 1 << 30, budget: DecodeBudget(maxBytes: 2 << 20, maxScans: 64)) }
        }
        #expect(throws: PreviewError.self) {
            try jpeg.withUnsafeBytes { try CubeTiler.decode($0, maxSourcePixels: 2048 * 1024 - 1, budget: .standard) }
        }
        #expect(throws: PreviewError.self) {
            try Array("not a jpeg".utf8).withUnsafeBytes { try CubeTiler.decode($0, maxSourcePixels: 1 << 30, budget: .standard) }
        }
    }

    private static func colour(x: Double, y: Double, z: Double) -> [UInt8] {
        [x, y, z].map { UInt8((128 + 120 * $0).rounded()) }
    }

    private static func encode(_ pixels: [UInt8], width: Int, height: Int, subsampling: TJSAMP) throws -> [UInt8] {
        let handle = try #require(tjInitCompress())
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        try #require(tjCompress2(handle, pixels, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), &output, &size,
                                 Int32(subsampling.rawValue), 90, 0) == 0)
        defer { tjFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    private static func decode(_ jpeg: [UInt8]) throws -> (width: Int, height: Int, pixels: [UInt8]) {
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        try #require(tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace) == 0)
        var pixels = [UInt8](repeating: 0, count: Int(width * height * 3))
        try #require(tjDecompress2(handle, jpeg, UInt(jpeg.count), &pixels, width, 0, height, Int32(TJPF_RGB.rawValue), 0) == 0)
        return (Int(width), Int(height), pixels)
    }
}

@Suite struct ArcTangentTests {
    @Test func theTablesAtan2IsGlibcsToWithinAHundredMillionthOfARadian() {
        ArcTangent.table.withUnsafeBufferPointer { table in
            let angles = ArcTangent(table: table)
            var worst = 0.0
            for step in 0..<20_000 {
                let angle = Double(step) / 20_000 * 2 * Double.pi - Double.pi
                for radius in [0.3, 1.0, 7.5] {
                    let (y, x) = (radius * sin(angle), radius * cos(angle))
                    worst = max(worst, abs(angles.atan2(y, x) - atan2(y, x)))
                }
            }
            #expect(worst < 1e-8)
            #expect(angles.atan2(0, 0) == 0 && angles.atan2(0, -1) == Double.pi && angles.atan2(1, 0) == Double.pi / 2)
        }
    }

    /// Only a panorama's shape is tiled, its faces from both dimensions and capped.
    @Test func theTilingRuleTilesPanoramasOnlyAndCapsTheirFaces() {
        let rule = TilingRule(minWidth: 6000, maxAspectRatio: 4, maxFaceSize: 8192)
        #expect(rule.pyramid(width: 65_500, height: 16) == nil) // a strip, 17 KB of JPEG
        #expect(rule.pyramid(width: 5000, height: 2500) == nil) // narrow: its preview suffices
        #expect(rule.pyramid(width: 6000, height: 8000) == nil) // taller than wide
        #expect(rule.pyramid(width: 16_384, height: 8192) == TilePyramid(panoramaWidth: 16_384))
        // A partial sweep (4:1) is sized by the sphere its height implies, not by its width.
        #expect(rule.pyramid(width: 16_384, height: 4096) == TilePyramid(panoramaWidth: 8192))
        // The largest face is capped, and so are the levels and the tiles.
        let capped = TilingRule(minWidth: 6000, maxAspectRatio: 4, maxFaceSize: 2048).pyramid(width: 65_000, height: 32_500)
        #expect(capped.map { $0.faceSize <= 2048 && $0.levels <= 3 } == true, "\(String(describing: capped))")
    }
}
