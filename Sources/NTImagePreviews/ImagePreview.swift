/// Previews of a panorama of any `ImageFormat`, as JPEGs: a JPEG decoded at the DCT scale its
/// widest preview needs (`JPEGPreview`), a PNG or HEIC decoded whole; then area-averaged to each
/// width, and drawn upright where it lies on the sphere (`PreviewLayout`). One decode makes
/// every width asked for together. Every check (pixels, decoding memory) is made from the
/// headers before any pixel is decoded.
public enum ImagePreview {
    /// What making a `width`-wide preview will do and hold at most; a refusal when the image
    /// cannot be previewed within `maxSourcePixels` and `budget`.
    public static func plan(_ format: ImageFormat, _ source: UnsafeRawBufferPointer, width: Int, maxSourcePixels: Int,
                            budget: DecodeBudget = .standard) throws(PreviewError) -> PreviewPlan {
        try plan(format, source, widths: [width], maxSourcePixels: maxSourcePixels, budget: budget)
    }

    /// The same for previews of each of `widths`, from one decode.
    public static func plan(_ format: ImageFormat, _ source: UnsafeRawBufferPointer, widths: [Int], maxSourcePixels: Int,
                            budget: DecodeBudget = .standard) throws(PreviewError) -> PreviewPlan {
        guard !widths.isEmpty, widths.allSatisfy({ $0 > 0 }) else { throw PreviewError("a preview needs a width") }
        let geometry = PanoramaGeometry.read(format, source, maxItems: budget.maxItems)
        guard let whole = WholeImage(format) else {
            return try JPEGPreview.plan(source, geometry: geometry, widths: widths, maxSourcePixels: maxSourcePixels, budget: budget)
        }
        let header = try whole.checkedHeader(source, maxSourcePixels: maxSourcePixels, budget: budget, for: "previews")
        return PreviewPlan(format: format, decoded: header.size, layouts: PreviewLayout.each(widths, stored: header.size, geometry: geometry),
                           decodingBytes: header.decodingBytes)
    }

    /// The previews `plan` decided, by width, from the bytes it was made of (its checks made
    /// already).
    public static func make(from source: UnsafeRawBufferPointer, _ plan: PreviewPlan, quality: Int, matte: Matte = .black) throws(PreviewError) -> [Int: [UInt8]] {
        guard let whole = WholeImage(plan.format) else { return try JPEGPreview.make(from: source, plan, quality: quality) }
        let rows = try whole.rgb(source, plan.decoded, matte: matte)
        return try finish(rows.base, stride: rows.stride, plan, quality: quality)
    }

    /// Decoded pixels made each preview: resized, drawn in place, encoded.
    static func finish(_ pixels: UnsafePointer<UInt8>, stride: Int, _ plan: PreviewPlan, quality: Int) throws(PreviewError) -> [Int: [UInt8]] {
        var made: [Int: [UInt8]] = [:]
        for (width, layout) in plan.layouts {
            let resized = AreaAverage.resize(pixels, stride: stride, from: plan.decoded, to: layout.resized)
            made[width] = try JPEGPreview.encode(layout.composes ? layout.compose(resized) : resized, layout.canvas, quality: quality)
        }
        return made
    }
}

/// What making previews will do (`ImagePreview.plan`), decided before any memory is given.
public struct PreviewPlan: Sendable {
    let format: ImageFormat
    /// The image as decoded (a JPEG at the DCT scale its widest preview needs).
    let decoded: Image
    /// Where the preview of each width asked for draws it.
    let layouts: [Int: PreviewLayout]
    /// The most memory making them holds: the decoding, and one preview's buffers at a time.
    public let memoryBytes: Int

    init(format: ImageFormat, decoded: Image, layouts: [Int: PreviewLayout], decodingBytes: Int) {
        (self.format, self.decoded, self.layouts) = (format, decoded, layouts)
        memoryBytes = decodingBytes + (layouts.values.map(\.bytes).max() ?? 0)
    }
}

/// Where a preview's pixels go: the whole sphere's equirectangular image (`canvas`), and in it
/// the image, upright, at its crop (`placed`, from `x`, `y`; running past the right edge it goes
/// on at the left, as the sphere does), the rest dark. An image drawn whole is the canvas.
struct PreviewLayout: Equatable, Sendable {
    let canvas: Image
    let placed: Image
    let x: Int
    let y: Int
    let geometry: PanoramaGeometry

    /// The layout of a `width`-wide preview (never wider than the sphere the image makes) of
    /// an image stored at `stored`.
    init(stored: Image, geometry: PanoramaGeometry, width: Int) {
        let sphere = geometry.sphere(stored: stored)
        canvas = sphere.scaled(toWidth: min(width, sphere.width))
        self.geometry = geometry
        guard let crop = geometry.crop else {
            (placed, x, y) = (canvas, 0, 0)
            return
        }
        let across = { (value: Int, full: Int, size: Int) in Int((Double(value) * Double(size) / Double(full)).rounded()) }
        x = across(crop.left, crop.fullWidth, canvas.width)
        y = min(across(crop.top, crop.fullHeight, canvas.height), canvas.height - 1)
        placed = Image(width: max(1, min(canvas.width, across(crop.width, crop.fullWidth, canvas.width))),
                       height: max(1, min(canvas.height - y, across(crop.height, crop.fullHeight, canvas.height))))
    }

    /// The layout of each of `widths`.
    static func each(_ widths: [Int], stored: Image, geometry: PanoramaGeometry) -> [Int: PreviewLayout] {
        Dictionary(widths.map { ($0, PreviewLayout(stored: stored, geometry: geometry, width: $0)) }) { first, _ in first }
    }

    /// The stored image's size once resized, before it is turned upright.
    var resized: Image { geometry.turned.upright(placed) }

    /// Whether the resized image is drawn onto a canvas (turned, or a crop of the sphere).
    var composes: Bool { !geometry.isWhole }

    /// The memory its resized image and canvas take.
    var bytes: Int { (resized.width * resized.height + (composes ? canvas.width * canvas.height : 0)) * 3 }

    /// The canvas with the `resized` image drawn on it.
    func compose(_ resized: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: canvas.width * canvas.height * 3)
        let (source, orientation) = (self.resized, geometry.turned)
        output.withUnsafeMutableBufferPointer { output in
            resized.withUnsafeBufferPointer { input in
                for row in 0..<placed.height {
                    let v = (Double(row) + 0.5) / Double(placed.height)
                    for column in 0..<placed.width {
                        let point = orientation.storedPoint((Double(column) + 0.5) / Double(placed.width), v)
                        let from = (min(Int(point.y * Double(source.height)), source.height - 1) * source.width
                                    + min(Int(point.x * Double(source.width)), source.width - 1)) * 3
                        let to = ((y + row) * canvas.width + (x + column) % canvas.width) * 3
                        output[to] = input[from]; output[to + 1] = input[from + 1]; output[to + 2] = input[from + 2]
                    }
                }
            }
        }
        return output
    }
}

extension Image {
    /// This size, when it is an image at all and no larger than `maxSourcePixels`.
    func checked(maxSourcePixels: Int, for what: String) throws(PreviewError) -> Image {
        guard width > 0, height > 0, width * height <= maxSourcePixels else {
            throw PreviewError("a \(width) × \(height) image is over the \(maxSourcePixels) pixels \(what) are made of")
        }
        return self
    }

    /// The size `width` pixels wide, its height by this one's aspect ratio (at least 1).
    func scaled(toWidth target: Int) -> Image {
        Image(width: target, height: max(1, (height * target + width / 2) / width))
    }
}
