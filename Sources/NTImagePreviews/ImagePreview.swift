/// Previews of a panorama of any `ImageFormat`, as JPEGs: a JPEG decoded at the DCT scale its
/// width needs (`JPEGPreview`), a PNG or HEIC decoded whole; then area-averaged to the width. Every
/// check (pixels, decoding memory) is made from the headers before any pixel is decoded.
public enum ImagePreview {
    /// What making a `width`-wide preview will do and hold at most; a refusal when the image
    /// cannot be previewed within `maxSourcePixels` and `budget`.
    public static func plan(_ format: ImageFormat, _ source: UnsafeRawBufferPointer, width: Int, maxSourcePixels: Int,
                            budget: DecodeBudget = .standard) throws(PreviewError) -> PreviewPlan {
        guard let whole = WholeImage(format) else { return try JPEGPreview.plan(source, width: width, maxSourcePixels: maxSourcePixels, budget: budget) }
        guard width > 0 else { throw PreviewError("a preview needs a width") }
        let size = try whole.size(source, budget: budget).checked(maxSourcePixels: maxSourcePixels, for: "previews")
        let decoding = whole.decodingBytes(size)
        if let refusal = budget.refusal(format, width: size.width, height: size.height, bytes: decoding) { throw refusal }
        let result = size.scaled(toWidth: min(width, size.width))
        return PreviewPlan(format: format, decoded: size, result: result, memoryBytes: decoding + result.width * result.height * 3)
    }

    /// The preview `plan` decided, from the bytes it was made of (its checks made already).
    public static func make(from source: UnsafeRawBufferPointer, _ plan: PreviewPlan, quality: Int) throws(PreviewError) -> [UInt8] {
        guard let whole = WholeImage(plan.format) else { return try JPEGPreview.make(from: source, plan, quality: quality) }
        let rows = try whole.rgb(source, plan.decoded)
        return try JPEGPreview.encode(AreaAverage.resize(rows.base, stride: rows.stride, from: plan.decoded, to: plan.result), plan.result, quality: quality)
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
