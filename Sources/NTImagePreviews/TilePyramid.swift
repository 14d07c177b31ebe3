#if canImport(Glibc)
import Glibc
#endif

/// The six faces of the cube a panorama is drawn on, seen from its centre. Directions are in
/// the viewer's frame: x to the right of the image's centre, y up, z behind it (the centre is
/// -z). A face's coordinates `a` (left to right) and `b` (top to bottom) run from -1 to 1.
public enum CubeFace: Int, CaseIterable, Sendable {
    case front, right, back, left, up, down

    /// The letter of its tiles' names, as the viewer's script names them.
    public var letter: Character { Array("frblud")[rawValue] }

    public init?(letter: Character) {
        guard let index = Array("frblud").firstIndex(of: letter) else { return nil }
        self.init(rawValue: index)
    }

    /// The direction (not normalised) through point (a, b) of the face.
    func direction(_ a: Double, _ b: Double) -> (x: Double, y: Double, z: Double) {
        switch self {
        case .front: (a, -b, -1)
        case .right: (1, -b, a)
        case .back: (-a, -b, 1)
        case .left: (-1, -b, -a)
        case .up: (a, 1, -b)
        case .down: (a, -1, b)
        }
    }

    /// Whether the face stands on the horizon: its longitudes then depend on `a` alone.
    var isSide: Bool { self != .up && self != .down }
}

/// The cube faces and tile levels of one panorama: each face cut into `tileSize` tiles at
/// `levels` sizes, the largest first halved down to one tile per face (level 0). The largest
/// face is as wide as the panorama's width over π (one face pixel per image pixel at the face's
/// centre, as Pannellum's tools cut), rounded to a multiple of 16 × 2^(levels−1) so that every
/// level halves exactly into whole JPEG blocks.
public struct TilePyramid: Equatable, Sendable {
    public static let tileSize = 512

    public let faceSize: Int
    public let levels: Int

    /// The pyramid of a panorama `width` pixels wide, its faces at most `maxFaceSize` across
    /// (rounded down to whole units).
    public init(panoramaWidth width: Int, maxFaceSize: Int = .max) {
        let target = max(16, min(Double(width) / Double.pi, Double(maxFaceSize)))
        var top = 0
        while Double(Self.tileSize << top) < target { top += 1 }
        let unit = 16 << top
        let rounded = max(unit, Int((target / Double(unit)).rounded()) * unit)
        faceSize = rounded > maxFaceSize ? max(unit, maxFaceSize / unit * unit) : rounded
        levels = top + 1
    }

    /// A pyramid as stored beside its tiles; nil when the numbers do not make one.
    public init?(faceSize: Int, levels: Int) {
        guard (1...12).contains(levels), faceSize > 0, faceSize % (16 << (levels - 1)) == 0,
              (faceSize >> (levels - 1)) <= Self.tileSize else { return nil }
        self.faceSize = faceSize
        self.levels = levels
    }

    /// A face's width at `level`.
    public func size(ofLevel level: Int) -> Int { faceSize >> (levels - 1 - level) }

    /// Tiles across (and down) a face at `level`; the last row and column may be narrower.
    public func tilesAcross(level: Int) -> Int { (size(ofLevel: level) + Self.tileSize - 1) / Self.tileSize }

    /// Whether `level`, `row` and `column` name a tile of this pyramid.
    public func contains(level: Int, row: Int, column: Int) -> Bool {
        (0..<levels).contains(level) && (0..<tilesAcross(level: level)).contains(row) && (0..<tilesAcross(level: level)).contains(column)
    }

    /// The file name of a tile, within its level's folder: `f2_3.jpg` (face, row, column).
    public static func tileName(_ face: CubeFace, row: Int, column: Int) -> String {
        "\(face.letter)\(row)_\(column).jpg"
    }

    /// The face, row and column a tile's file name names; nil for any other name.
    public static func parseTileName(_ name: Substring) -> (face: CubeFace, row: Int, column: Int)? {
        guard name.hasSuffix(".jpg"), let letter = name.first, let face = CubeFace(letter: letter) else { return nil }
        let numbers = name.dropFirst().dropLast(4).split(separator: "_", omittingEmptySubsequences: false)
        guard numbers.count == 2, numbers.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let row = Int(numbers[0]), let column = Int(numbers[1]),
              String(row) == numbers[0], String(column) == numbers[1] else { return nil }
        return (face, row, column)
    }
}

/// Which images are cut into tiles, and how far (`tileMinWidth`, `tileMaxAspectRatio`,
/// `maxTileFaceSize`): a panorama's shape only (as wide as tall up to `maxAspectRatio` times as
/// wide; a full sphere is 2), at least `minWidth` wide, its faces sized from both dimensions
/// (the sphere the height implies, 2 × height, as much as the width) and capped, which caps
/// the levels and the tiles too. Pure.
public struct TilingRule: Sendable, Equatable {
    public var minWidth: Int
    public var maxAspectRatio: Double
    public var maxFaceSize: Int
    /// The most pixels the sphere a pyramid is cut from may hold per pixel of its image
    /// (`tileMaxSpherePerPixel`): a crop of at least 1/this of its sphere is tiled at its own
    /// resolution, a smaller one (or one whose GPano claims a far larger sphere than its pixels
    /// show) as a sphere of this many times its pixels. Faces and tiles come from the pixels
    /// the file has, never from what its metadata claims.
    public var maxSpherePerImagePixel: Int

    public init(minWidth: Int, maxAspectRatio: Double, maxFaceSize: Int, maxSpherePerImagePixel: Int = 4) {
        self.minWidth = minWidth
        self.maxAspectRatio = maxAspectRatio
        self.maxFaceSize = maxFaceSize
        self.maxSpherePerImagePixel = maxSpherePerImagePixel
    }

    /// The pyramid of an image of `imagePixels` pixels drawn on a `sphere` (its own size, or
    /// the whole sphere its crop lies on); nil when it is not to be tiled.
    func pyramid(sphere: Image, imagePixels: Int) -> TilePyramid? {
        let most = Double(maxSpherePerImagePixel) * Double(imagePixels)
        let held = Double(sphere.width) * Double(sphere.height)
        guard held > most else { return pyramid(width: sphere.width, height: sphere.height) }
        let scale = (most / held).squareRoot()
        return pyramid(width: Int(Double(sphere.width) * scale), height: Int(Double(sphere.height) * scale))
    }

    /// The pyramid of a `width` × `height` image; nil when it is not to be tiled.
    public func pyramid(width: Int, height: Int) -> TilePyramid? {
        guard width >= minWidth, height > 0, width >= height, Double(width) <= maxAspectRatio * Double(height) else { return nil }
        return TilePyramid(panoramaWidth: min(width, 2 * height), maxFaceSize: maxFaceSize)
    }
}

/// What cutting one panorama into tiles will take (`CubeTiler.plan`).
public struct TilingPlan: Sendable, Equatable {
    let format: ImageFormat
    public let pyramid: TilePyramid
    /// The image's size and the subsampling of its planes, as its header said.
    let frame: CubeTiler.Frame
    /// How the image is drawn on the sphere, as its headers say.
    public let geometry: PanoramaGeometry
    /// The most memory its buffers hold at once.
    public let memoryBytes: Int
}
