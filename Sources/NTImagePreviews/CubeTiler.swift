#if canImport(Glibc)
import Glibc
#endif
import CNTTurboJPEG

/// An image as libjpeg-turbo's planes of Y, Cb and Cr (one plane for greyscale), each at its
/// own resolution by the JPEG's chroma subsampling. Tiles are cut in this form: no colour
/// conversion, and chroma handled at its own (usually a quarter) size.
public struct PlanarImage: Sendable {
    public let width: Int
    public let height: Int
    /// libjpeg-turbo's TJSAMP_* value.
    public let subsampling: Int32
    let planes: [PlaneBuffer]

    var planeCount: Int { planes.count }
    func planeWidth(_ plane: Int) -> Int { Int(tjPlaneWidth(Int32(plane), Int32(width), subsampling)) }
    func planeHeight(_ plane: Int) -> Int { Int(tjPlaneHeight(Int32(plane), Int32(height), subsampling)) }

    /// An image whose planes are allocated, to be written by its maker before it is shared.
    init(width: Int, height: Int, subsampling: Int32) {
        let count = subsampling == Int32(TJSAMP_GRAY.rawValue) ? 1 : 3
        planes = (0..<count).map { plane in
            PlaneBuffer(count: Int(tjPlaneWidth(Int32(plane), Int32(width), subsampling)) * Int(tjPlaneHeight(Int32(plane), Int32(height), subsampling)))
        }
        self.width = width
        self.height = height
        self.subsampling = subsampling
    }

    /// The bytes its planes take.
    public var bytes: Int { planes.reduce(0) { $0 + $1.count } }

    /// The bytes an image's planes would take.
    static func bytes(width: Int, height: Int, subsampling: Int32) -> Int {
        (0..<(subsampling == Int32(TJSAMP_GRAY.rawValue) ? 1 : 3)).reduce(0) { total, plane in
            total + Int(tjPlaneWidth(Int32(plane), Int32(width), subsampling)) * Int(tjPlaneHeight(Int32(plane), Int32(height), subsampling))
        }
    }

    /// The planes' addresses, as libjpeg-turbo takes them.
    var pointers: [UnsafeMutablePointer<UInt8>?] { planes.map(\.start) }
}

/// One plane's bytes: hundreds of MB for a large panorama, allocated without being cleared and
/// freed with the last image that holds them. Written only by the step that makes its image,
/// before the image is handed on: never by two threads, never after it is shared.
final class PlaneBuffer: @unchecked Sendable {
    let start: UnsafeMutablePointer<UInt8>
    let count: Int

    init(count: Int) {
        self.count = count
        start = .allocate(capacity: max(1, count))
    }

    deinit { start.deallocate() }
}

/// Cube faces and their tiles from an equirectangular JPEG, with libjpeg-turbo: the panorama
/// is decoded once to its planes, each face is sampled from them (bilinear, wrapping round the
/// horizon), and each level is the one above it halved, encoded tile by tile straight from the
/// planes. CPU work in steps (decode, then a face at a time) for a pool that other work shares.
public enum CubeTiler {
    /// What cutting a JPEG into tiles takes, decided from its headers alone: its pyramid, and
    /// the memory its decoded planes and the face being cut hold at most (a face and its halved
    /// copy). Nil when `rule` does not tile an image of its size; a refusal when it cannot be
    /// decoded within `maxSourcePixels` and `budget`.
    public static func plan(_ source: UnsafeRawBufferPointer, rule: TilingRule, maxSourcePixels: Int,
                            budget: DecodeBudget) throws(PreviewError) -> TilingPlan? {
        try plan(.jpeg, source, rule: rule, maxSourcePixels: maxSourcePixels, budget: budget)
    }

    /// The same for an image of `format`: a PNG or HEIC is decoded whole to RGB, then
    /// converted to 4:2:0 planes (both held at once, and budgeted so).
    public static func plan(_ format: ImageFormat, _ source: UnsafeRawBufferPointer, rule: TilingRule, maxSourcePixels: Int,
                            budget: DecodeBudget) throws(PreviewError) -> TilingPlan? {
        let whole = WholeImage(format)
        let header = try whole.map { whole throws(PreviewError) in
            try whole.checkedHeader(source, maxSourcePixels: maxSourcePixels, budget: budget, for: "tiles") { size in
                PlanarImage.bytes(width: size.width, height: size.height, subsampling: Frame(rgb: size).subsampling)
            }
        }
        let frame = if let header { Frame(rgb: header.size) } else { try self.frame(source) }
        // Cut as the whole sphere the image makes, upright.
        let geometry = PanoramaGeometry.read(format, source, maxItems: budget.maxItems)
        let sphere = geometry.sphere(stored: Image(width: frame.width, height: frame.height))
        guard let pyramid = rule.pyramid(sphere: sphere, imagePixels: frame.width * frame.height) else { return nil }
        let decoding: Int
        if let header {
            decoding = header.decodingBytes + PlanarImage.bytes(width: frame.width, height: frame.height, subsampling: frame.subsampling)
        } else {
            decoding = try decodingBytes(frame, source, maxSourcePixels: maxSourcePixels, budget: budget)
        }
        let face = PlanarImage.bytes(width: pyramid.faceSize, height: pyramid.faceSize, subsampling: frame.subsampling)
        return TilingPlan(format: format, pyramid: pyramid, frame: frame, geometry: geometry, memoryBytes: decoding + face + face / 4)
    }

    /// A JPEG's size, subsampling and colour space, from its header alone.
    struct Frame: Sendable, Equatable {
        let width: Int
        let height: Int
        let subsampling: Int32
        let colorspace: Int32
    }

    private static func frame(_ source: UnsafeRawBufferPointer) throws(PreviewError) -> Frame {
        guard let base = source.baseAddress?.assumingMemoryBound(to: UInt8.self), !source.isEmpty else { throw PreviewError("an empty file is not a JPEG") }
        guard let handle = tjInitDecompress() else { throw PreviewError("libjpeg-turbo cannot start a decoder") }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, base, UInt(source.count), &width, &height, &subsampling, &colorspace) == 0 else {
            throw PreviewError("not a readable JPEG: \(errorText(handle))")
        }
        return Frame(width: Int(width), height: Int(height), subsampling: subsampling, colorspace: colorspace)
    }

    /// The memory decoding the JPEG to its planes takes, checked against `maxSourcePixels` and
    /// `budget` (one pass over its markers) before anything is allocated.
    private static func decodingBytes(_ frame: Frame, _ source: UnsafeRawBufferPointer, maxSourcePixels: Int,
                                      budget: DecodeBudget) throws(PreviewError) -> Int {
        guard frame.width > 0, frame.height > 0, frame.width * frame.height <= maxSourcePixels else {
            throw PreviewError("a \(frame.width) × \(frame.height) image is over the \(maxSourcePixels) pixels tiles are made of")
        }
        guard frame.subsampling >= 0, frame.colorspace == Int32(TJCS_YCbCr.rawValue) || frame.colorspace == Int32(TJCS_GRAY.rawValue) else {
            throw PreviewError("tiles are made of YCbCr and greyscale JPEGs, not of this one's colour space")
        }
        guard let structure = JPEGStructure.read(source) else { throw PreviewError("not a readable JPEG: its markers do not hold a frame and a scan") }
        let planarBytes = PlanarImage.bytes(width: frame.width, height: frame.height, subsampling: frame.subsampling)
        if let refusal = budget.refusal(structure, outputBytes: planarBytes) { throw refusal }
        return structure.decodingBytes(outputBytes: planarBytes)
    }

    /// The planes of a JPEG, refused before any memory is given to them when the header claims
    /// more than `maxSourcePixels` or the decoding would take more than `budget`.
    public static func decode(_ source: UnsafeRawBufferPointer, maxSourcePixels: Int, budget: DecodeBudget) throws(PreviewError) -> PlanarImage {
        let frame = try frame(source)
        _ = try decodingBytes(frame, source, maxSourcePixels: maxSourcePixels, budget: budget)
        return try planes(source, frame)
    }

    /// The planes `plan` decided on, from the bytes it was made of (its checks made already).
    public static func decode(_ source: UnsafeRawBufferPointer, _ plan: TilingPlan) throws(PreviewError) -> PlanarImage {
        guard let whole = WholeImage(plan.format) else { return try planes(source, plan.frame) }
        return try planes(rgb: try whole.rgb(source, Image(width: plan.frame.width, height: plan.frame.height), matte: .black), plan.frame)
    }

    /// RGB rows as the planes of `frame`'s subsampling.
    private static func planes(rgb rows: RGBRows, _ frame: Frame) throws(PreviewError) -> PlanarImage {
        guard let handle = tjInitCompress() else { throw PreviewError("libjpeg-turbo cannot start an encoder") }
        defer { tjDestroy(handle) }
        let image = PlanarImage(width: frame.width, height: frame.height, subsampling: frame.subsampling)
        var pointers = image.pointers
        var strides = (0..<image.planeCount).map { Int32(image.planeWidth($0)) }
        let status = tjEncodeYUVPlanes(handle, rows.base, Int32(frame.width), Int32(rows.stride), Int32(frame.height), Int32(TJPF_RGB.rawValue),
                                       &pointers, &strides, frame.subsampling, TJFLAG_FASTDCT)
        guard status == 0 else { throw PreviewError("the image cannot be converted to planes: \(errorText(handle))") }
        return image
    }

    private static func planes(_ source: UnsafeRawBufferPointer, _ frame: Frame) throws(PreviewError) -> PlanarImage {
        guard let handle = tjInitDecompress() else { throw PreviewError("libjpeg-turbo cannot start a decoder") }
        defer { tjDestroy(handle) }
        let (width, height, subsampling) = (Int32(frame.width), Int32(frame.height), frame.subsampling)
        let base = source.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let image = PlanarImage(width: Int(width), height: Int(height), subsampling: subsampling)
        var pointers = image.pointers
        var strides = (0..<image.planeCount).map { Int32(image.planeWidth($0)) }
        let status = tjDecompressToYUVPlanes(handle, base, UInt(source.count), &pointers, width, &strides, height, TJFLAG_FASTDCT | TJFLAG_LIMITSCANS)
        // A warning (a truncated file, say) still leaves an image worth showing.
        guard status == 0 || tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) else {
            throw PreviewError("the JPEG cannot be decoded: \(errorText(handle))")
        }
        return image
    }

    /// One face of the cube, `size` pixels square (a multiple of 16), sampled from `panorama`
    /// drawn by `geometry` (upright, at its crop: dark where it does not reach).
    public static func face(_ face: CubeFace, of panorama: PlanarImage, size: Int, geometry: PanoramaGeometry = .whole) -> PlanarImage {
        let result = PlanarImage(width: size, height: size, subsampling: panorama.subsampling)
        for plane in 0..<result.planeCount {
            let source = Plane(width: panorama.planeWidth(plane), height: panorama.planeHeight(plane))
            let target = Plane(width: result.planeWidth(plane), height: result.planeHeight(plane))
            let input = UnsafeBufferPointer(start: panorama.planes[plane].start, count: panorama.planes[plane].count)
            let output = UnsafeMutableBufferPointer(start: result.planes[plane].start, count: result.planes[plane].count)
            if geometry.isWhole {
                sample(face, from: input, source, into: output, target)
            } else {
                // Black: no light, no colour.
                sample(face, from: input, source, geometry: geometry, dark: plane == 0 ? 0 : 128, into: output, target)
            }
        }
        return result
    }

    /// The image at half its size (its size even), each pixel the mean of the four it covers.
    public static func halved(_ image: PlanarImage) -> PlanarImage {
        let result = PlanarImage(width: image.width / 2, height: image.height / 2, subsampling: image.subsampling)
        for plane in 0..<result.planeCount {
            let (width, height, sourceWidth) = (result.planeWidth(plane), result.planeHeight(plane), image.planeWidth(plane))
            let (input, output) = (image.planes[plane].start, result.planes[plane].start)
            for y in 0..<height {
                let top = 2 * y * sourceWidth, bottom = top + sourceWidth
                for x in 0..<width {
                    let sum = Int(input[top + 2 * x]) + Int(input[top + 2 * x + 1]) + Int(input[bottom + 2 * x]) + Int(input[bottom + 2 * x + 1])
                    output[y * width + x] = UInt8((sum + 2) >> 2)
                }
            }
        }
        return result
    }

    /// The tiles of one face at one level, `TilePyramid.tileSize` square but for the last row
    /// and column, each a JPEG encoded from the face's planes in place.
    public static func tiles(of face: PlanarImage, quality: Int) throws(PreviewError) -> [(row: Int, column: Int, jpeg: [UInt8])] {
        guard let handle = tjInitCompress() else { throw PreviewError("libjpeg-turbo cannot start an encoder") }
        defer { tjDestroy(handle) }
        let tile = TilePyramid.tileSize, across = (face.width + tile - 1) / tile
        let strides = (0..<face.planeCount).map { Int32(face.planeWidth($0)) }
        var tiles: [(row: Int, column: Int, jpeg: [UInt8])] = []
        for row in 0..<across {
            for column in 0..<across {
                let (x, y) = (column * tile, row * tile)
                let (width, height) = (min(tile, face.width - x), min(tile, face.height - y))
                var output: UnsafeMutablePointer<UInt8>?
                var outputSize: UInt = 0
                // The tile's corner in each plane: the face's sizes are multiples of 16, so every
                // plane's scale is exact.
                var origins = (0..<face.planeCount).map { plane -> UnsafePointer<UInt8>? in
                    let offset = y * face.planeHeight(plane) / face.height * Int(strides[plane]) + x * face.planeWidth(plane) / face.width
                    return UnsafePointer(face.planes[plane].start + offset)
                }
                var planeStrides = strides
                let status = tjCompressFromYUVPlanes(handle, &origins, Int32(width), &planeStrides, Int32(height), face.subsampling,
                                                     &output, &outputSize, Int32(min(100, max(1, quality))), TJFLAG_FASTDCT)
                defer { if let output { tjFree(output) } }
                guard status == 0, let output else { throw PreviewError("a tile cannot be encoded: \(errorText(handle))") }
                tiles.append((row, column, Array(UnsafeBufferPointer(start: output, count: Int(outputSize)))))
            }
        }
        return tiles
    }

    private struct Plane {
        var width: Int
        var height: Int
    }

    /// Fills a face's plane from the panorama's: each pixel's direction to longitude and
    /// latitude, then the source bilinearly there. On a side face a column has one longitude
    /// and one horizontal distance, computed once per column. Angles come from `ArcTangent`'s
    /// table: glibc's atan2 would be most of the work.
    private static func sample(_ face: CubeFace, from input: UnsafeBufferPointer<UInt8>, _ source: Plane,
                               into output: UnsafeMutableBufferPointer<UInt8>, _ target: Plane) {
        let (sourceWidth, sourceHeight) = (Double(source.width), Double(source.height))
        let coordinates = { (index: Int, count: Int) in 2 * (Double(index) + 0.5) / Double(count) - 1 }
        let column = { (longitude: Double) in (longitude / (2 * Double.pi) + 0.5) * sourceWidth - 0.5 }
        let row = { (latitude: Double) in (0.5 - latitude / Double.pi) * sourceHeight - 0.5 }
        ArcTangent.table.withUnsafeBufferPointer { table in
            let angles = ArcTangent(table: table)
            if face.isSide {
                let columns = (0..<target.width).map { x -> (u: Double, distance: Double) in
                    let d = face.direction(coordinates(x, target.width), 0)
                    return (column(angles.atan2(d.x, -d.z)), (d.x * d.x + d.z * d.z).squareRoot())
                }
                for y in 0..<target.height {
                    let b = coordinates(y, target.height)
                    for x in 0..<target.width {
                        output[y * target.width + x] = bilinear(input, source, columns[x].u, row(angles.atan2(-b, columns[x].distance)))
                    }
                }
            } else {
                for y in 0..<target.height {
                    let b = coordinates(y, target.height)
                    for x in 0..<target.width {
                        let d = face.direction(coordinates(x, target.width), b)
                        output[y * target.width + x] = bilinear(input, source, column(angles.atan2(d.x, -d.z)),
                                                                row(angles.atan2(d.y, (d.x * d.x + d.z * d.z).squareRoot())))
                    }
                }
            }
        }
    }

    /// The same for an image drawn by `geometry`: each pixel's direction to a point of the whole
    /// sphere, then to the stored image's point (`dark` where there is none).
    private static func sample(_ face: CubeFace, from input: UnsafeBufferPointer<UInt8>, _ source: Plane, geometry: PanoramaGeometry, dark: UInt8,
                               into output: UnsafeMutableBufferPointer<UInt8>, _ target: Plane) {
        let coordinates = { (index: Int, count: Int) in 2 * (Double(index) + 0.5) / Double(count) - 1 }
        ArcTangent.table.withUnsafeBufferPointer { table in
            let angles = ArcTangent(table: table)
            for y in 0..<target.height {
                let b = coordinates(y, target.height)
                for x in 0..<target.width {
                    let d = face.direction(coordinates(x, target.width), b)
                    let longitude = angles.atan2(d.x, -d.z), latitude = angles.atan2(d.y, (d.x * d.x + d.z * d.z).squareRoot())
                    guard let point = geometry.storedPoint(longitude / (2 * Double.pi) + 0.5, 0.5 - latitude / Double.pi) else {
                        output[y * target.width + x] = dark
                        continue
                    }
                    output[y * target.width + x] = bilinear(input, source, point.x * Double(source.width) - 0.5, point.y * Double(source.height) - 0.5)
                }
            }
        }
    }

    /// The plane's value at (u, v) by bilinear interpolation (weights in 1/256ths): wrapping
    /// across the image's left and right edges (they meet behind the viewer), clamped at the
    /// poles. `u` is within [-0.5, width - 0.5] and `v` within [-0.5, height - 0.5], as a
    /// longitude within [-π, π] and a latitude within [-π/2, π/2] give.
    @inline(__always)
    private static func bilinear(_ input: UnsafeBufferPointer<UInt8>, _ plane: Plane, _ u: Double, _ v: Double) -> UInt8 {
        // Int(_:) truncates toward zero: shifted by one, it floors anything above -1.
        let (left, up) = (Int(u + 1) - 1, Int(v + 1) - 1)
        let (fu, fv) = (Int((u - Double(left)) * 256), Int((v - Double(up)) * 256))
        let x0 = left < 0 ? plane.width - 1 : min(left, plane.width - 1)
        let x1 = x0 + 1 == plane.width ? 0 : x0 + 1
        let y0 = min(max(up, 0), plane.height - 1), y1 = min(up + 1, plane.height - 1)
        let (row0, row1) = (y0 * plane.width, y1 * plane.width)
        let top = Int(input[row0 + x0]) * (256 - fu) + Int(input[row0 + x1]) * fu
        let bottom = Int(input[row1 + x0]) * (256 - fu) + Int(input[row1 + x1]) * fu
        return UInt8(truncatingIfNeeded: (top * (256 - fv) + bottom * fv + 32_768) >> 16)
    }

    private static func errorText(_ handle: tjhandle) -> String {
        tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
    }
}

/// atan2 from a table of atan over [0, 1] (4,096 steps, linearly interpolated: within 1e-8
/// radians, a thousandth of a pixel of a 16384-pixel panorama) and the octant's symmetries.
struct ArcTangent {
    static let steps = 4096
    static let table: [Double] = (0...steps).map { Glibc.atan(Double($0) / Double(steps)) }

    let table: UnsafeBufferPointer<Double>

    @inline(__always)
    func atan(unit t: Double) -> Double {
        let scaled = t * Double(Self.steps)
        let index = min(Int(scaled), Self.steps - 1)
        let fraction = scaled - Double(index)
        return table[index] + (table[index + 1] - table[index]) * fraction
    }

    @inline(__always)
    func atan2(_ y: Double, _ x: Double) -> Double {
        let (ay, ax) = (abs(y), abs(x))
        guard ay > 0 || ax > 0 else { return 0 }
        var angle = ay <= ax ? atan(unit: ay / ax) : Double.pi / 2 - atan(unit: ax / ay)
        if x < 0 { angle = Double.pi - angle }
        return y < 0 ? -angle : angle
    }
}

extension CubeTiler.Frame {
    /// An image decoded whole to RGB, cut from the 4:2:0 planes its pixels are converted to.
    init(rgb size: Image) {
        self.init(width: size.width, height: size.height, subsampling: Int32(TJSAMP_420.rawValue), colorspace: Int32(TJCS_YCbCr.rawValue))
    }
}
