import CNTTurboJPEG

/// Why a preview could not be made from an image.
public struct PreviewError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Smaller JPEGs of a JPEG, with libjpeg-turbo: the source is decoded at the smallest of its
/// DCT scales (1/8, 1/4, …) that is still at least as wide as asked, so an 8192-pixel
/// panorama becomes a 1024-pixel one without ever being decoded whole; what remains is
/// area-averaged to the exact width. CPU work: callers run it off the event loops.
public enum JPEGPreview {
    /// A JPEG `width` pixels wide (never wider than the source), its height by the source's
    /// aspect ratio. `maxSourcePixels` refuses a header that claims a larger image, and
    /// `budget` one whose decoding would take more memory or scans, before any memory is
    /// given to it.
    public static func make(from jpeg: [UInt8], width: Int, quality: Int, maxSourcePixels: Int,
                            budget: DecodeBudget = .standard) throws(PreviewError) -> [UInt8] {
        let result = jpeg.withUnsafeBytes { bytes in
            Result { () throws(PreviewError) in try make(from: bytes, width: width, quality: quality, maxSourcePixels: maxSourcePixels, budget: budget) }
        }
        return try result.get()
    }

    /// The same from bytes in place (a mapped file: a panorama is never copied whole).
    public static func make(from source: UnsafeRawBufferPointer, width: Int, quality: Int, maxSourcePixels: Int,
                            budget: DecodeBudget = .standard) throws(PreviewError) -> [UInt8] {
        let plan = try ImagePreview.plan(.jpeg, source, width: width, maxSourcePixels: maxSourcePixels, budget: budget)
        guard let made = try make(from: source, plan, quality: quality)[width] else { throw PreviewError("no \(width)-wide preview was made") }
        return made
    }

    /// The previews `plan` decided, by width, from the bytes they are made of (its checks made already).
    static func make(from source: UnsafeRawBufferPointer, _ plan: PreviewPlan, quality: Int) throws(PreviewError) -> [Int: [UInt8]] {
        guard let handle = tjInitDecompress() else { throw PreviewError("libjpeg-turbo cannot start a decoder") }
        defer { tjDestroy(handle) }
        let decoded = plan.decoded
        var pixels = [UInt8](repeating: 0, count: decoded.width * decoded.height * 3)
        // TJFLAG_LIMITSCANS too: libjpeg-turbo's own ceiling, should the markers be read otherwise.
        let status = pixels.withUnsafeMutableBufferPointer { buffer in
            tjDecompress2(handle, source.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt(source.count), buffer.baseAddress,
                          Int32(decoded.width), 0, Int32(decoded.height), Int32(TJPF_RGB.rawValue), TJFLAG_FASTDCT | TJFLAG_LIMITSCANS)
        }
        // A warning (a truncated file, say) still leaves an image worth showing.
        guard status == 0 || tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) else {
            throw PreviewError("the JPEG cannot be decoded: \(errorText(handle))")
        }
        return try pixels.withUnsafeBufferPointer { buffer throws(PreviewError) in
            try ImagePreview.finish(buffer.baseAddress!, stride: decoded.width * 3, plan, quality: quality)
        }
    }

    /// What making previews of `widths` of `source`, drawn by `geometry`, will do, and the memory
    /// it takes at most (its coefficients, decoded pixels, a resized copy and canvas), read from
    /// the headers alone (one pass over the markers): decoded once, at the scale the widest
    /// one's place needs. A refusal when the image cannot be previewed within `maxSourcePixels`
    /// and `budget`.
    static func plan(_ source: UnsafeRawBufferPointer, geometry: PanoramaGeometry, widths: [Int], maxSourcePixels: Int,
                     budget: DecodeBudget) throws(PreviewError) -> PreviewPlan {
        guard let base = source.baseAddress?.assumingMemoryBound(to: UInt8.self), !source.isEmpty else { throw PreviewError("an empty file is not a JPEG") }
        guard let handle = tjInitDecompress() else { throw PreviewError("libjpeg-turbo cannot start a decoder") }
        defer { tjDestroy(handle) }
        var sourceWidth: Int32 = 0, sourceHeight: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, base, UInt(source.count), &sourceWidth, &sourceHeight, &subsampling, &colorspace) == 0 else {
            throw PreviewError("not a readable JPEG: \(errorText(handle))")
        }
        let size = try Image(width: Int(sourceWidth), height: Int(sourceHeight)).checked(maxSourcePixels: maxSourcePixels, for: "previews")
        let layouts = PreviewLayout.each(widths, stored: size, geometry: geometry)
        let target = min(layouts.values.map(\.resized.width).max() ?? 1, size.width)
        let scale = decodeScale(sourceWidth: Int(sourceWidth), target: target)
        // The smallest DCT scale is 1/8, so a small preview of a large panorama decodes to more
        // than it shows (an 8192-wide one to 1024 for a 320 thumbnail): what that costs is the
        // budget's to decide, whatever the image's shape, never a ratio to the preview's size.
        let decoded = Image(width: scaled(Int(sourceWidth), scale), height: scaled(Int(sourceHeight), scale))
        guard let structure = JPEGStructure.read(source) else { throw PreviewError("not a readable JPEG: its markers do not hold a frame and a scan") }
        if let refusal = budget.refusal(structure, decodedPixels: decoded.width * decoded.height) { throw refusal }
        return PreviewPlan(format: .jpeg, decoded: decoded, layouts: layouts,
                           decodingBytes: structure.decodingBytes(outputBytes: decoded.width * decoded.height * 3))
    }

    /// The width and height a JPEG's header declares; nil when it is not a readable JPEG.
    public static func dimensions(of jpeg: [UInt8]) -> (width: Int, height: Int)? {
        guard let handle = tjInitDecompress() else { return nil }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace) == 0,
              width > 0, height > 0 else { return nil }
        return (Int(width), Int(height))
    }

    /// A flat grey JPEG of the size asked: what stands in for an image without a preview.
    /// One grey channel: a third of the canvas an RGB one would pass through the encoder.
    public static func placeholder(width: Int, height: Int, quality: Int) throws(PreviewError) -> [UInt8] {
        try flat(width: width, height: height, quality: quality, grey: true)
    }

    /// A JPEG of one grey, with one channel (`grey`) or as RGB in 4:2:0, as cameras write.
    public static func flat(width: Int, height: Int, quality: Int, grey: Bool) throws(PreviewError) -> [UInt8] {
        let size = Image(width: max(1, width), height: max(1, height))
        let pixels = [UInt8](repeating: 0xd0, count: size.width * size.height * (grey ? 1 : 3))
        return try encode(pixels, size, quality: quality, grey: grey)
    }

    /// The numerator and denominator of the smallest scale whose width is at least `target`.
    static func decodeScale(sourceWidth: Int, target: Int) -> (num: Int, denom: Int) {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return (1, 1) }
        var best = (num: 1, denom: 1)
        for index in 0..<Int(count) {
            let factor = (num: Int(factors[index].num), denom: Int(factors[index].denom))
            let width = scaled(sourceWidth, factor)
            guard factor.num <= factor.denom, width >= target else { continue }
            if width < scaled(sourceWidth, best) { best = factor }
        }
        return best
    }

    /// TJSCALED: the dimension at a scale, rounded up.
    static func scaled(_ dimension: Int, _ scale: (num: Int, denom: Int)) -> Int {
        (dimension * scale.num + scale.denom - 1) / scale.denom
    }

    /// `pixels`: RGB, or with `grey` one grey byte each.
    static func encode(_ pixels: [UInt8], _ size: Image, quality: Int, grey: Bool = false) throws(PreviewError) -> [UInt8] {
        guard let handle = tjInitCompress() else { throw PreviewError("libjpeg-turbo cannot start an encoder") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var outputSize: UInt = 0
        let status = pixels.withUnsafeBufferPointer { buffer in
            tjCompress2(handle, buffer.baseAddress, Int32(size.width), 0, Int32(size.height), Int32((grey ? TJPF_GRAY : TJPF_RGB).rawValue),
                        &output, &outputSize, Int32((grey ? TJSAMP_GRAY : TJSAMP_420).rawValue), Int32(min(100, max(1, quality))), TJFLAG_FASTDCT)
        }
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else { throw PreviewError("the preview cannot be encoded: \(errorText(handle))") }
        return Array(UnsafeBufferPointer(start: output, count: Int(outputSize)))
    }

    private static func errorText(_ handle: tjhandle) -> String {
        tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
    }
}

/// The size of an RGB image.
struct Image: Equatable, Sendable {
    var width: Int
    var height: Int
}

/// Downscaling by averaging every source pixel a destination pixel covers (a box filter):
/// no aliasing when shrinking by large factors, which a panorama's fine detail would show.
enum AreaAverage {
    /// Rows `stride` bytes apart (a decoder's buffer) resized; a copy when the sizes are one.
    static func resize(_ input: UnsafePointer<UInt8>, stride: Int, from: Image, to: Image) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: to.width * to.height * 3)
        // Each destination column's span of source columns, computed once.
        let columns = (0..<to.width).map { x in span(x, from.width, to.width) }
        result.withUnsafeMutableBufferPointer { output in
            for y in 0..<to.height {
                let rows = span(y, from.height, to.height)
                for x in 0..<to.width {
                    let cols = columns[x]
                    var red = 0, green = 0, blue = 0
                    for row in rows {
                        var index = row * stride + cols.lowerBound * 3
                        for _ in cols {
                            red += Int(input[index]); green += Int(input[index + 1]); blue += Int(input[index + 2])
                            index += 3
                        }
                    }
                    let count = rows.count * cols.count
                    let out = (y * to.width + x) * 3
                    output[out] = UInt8((red + count / 2) / count)
                    output[out + 1] = UInt8((green + count / 2) / count)
                    output[out + 2] = UInt8((blue + count / 2) / count)
                }
            }
        }
        return result
    }

    /// The source indexes destination index `index` covers (at least one).
    static func span(_ index: Int, _ source: Int, _ destination: Int) -> Range<Int> {
        let start = index * source / destination
        let end = max(start + 1, ((index + 1) * source + destination - 1) / destination)
        return start..<min(end, source)
    }
}
