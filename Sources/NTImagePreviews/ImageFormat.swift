/// The formats previews and tiles are made of, by the media type a panorama was stored with.
public enum ImageFormat: String, Sendable, Equatable, CaseIterable {
    case jpeg = "image/jpeg"
    case png = "image/png"
    case heic = "image/heic"

    /// nil for a media type no preview is made of (the placeholder stands in).
    public init?(mediaType: String) {
        self.init(rawValue: mediaType)
    }

    var name: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .heic: "HEIC"
        }
    }
}

/// The formats decoded whole to RGB (no scaled decoding, unlike a JPEG's DCT): the size their
/// header declares, what decoding them takes, and their pixels.
enum WholeImage {
    case png, heic

    /// nil for a JPEG.
    init?(_ format: ImageFormat) {
        switch format {
        case .jpeg: return nil
        case .png: self = .png
        case .heic: self = .heic
        }
    }

    /// What decoding it takes, from its header alone, the container's limits checked against
    /// `budget`: the size it is decoded to, the largest image its decoder makes on the way, and
    /// the memory that holds.
    func header(_ source: UnsafeRawBufferPointer, budget: DecodeBudget) throws(PreviewError) -> WholeImageHeader {
        switch self {
        case .png:
            let size = try PNGImage.size(source)
            return WholeImageHeader(size: size, largest: size, decodingBytes: PNGImage.decodingBytes(size))
        case .heic:
            let header = try HEICImage.header(source, maxItems: budget.maxItems)
            return WholeImageHeader(size: header.size, largest: header.largest, decodingBytes: header.decodingBytes)
        }
    }

    /// Its header's size and largest image within `maxSourcePixels`, and its decoding within
    /// `budget`; the header then.
    func checkedHeader(_ source: UnsafeRawBufferPointer, maxSourcePixels: Int, budget: DecodeBudget, for what: String,
                       plus extraBytes: (Image) -> Int = { _ in 0 }) throws(PreviewError) -> WholeImageHeader {
        let header = try header(source, budget: budget)
        _ = try header.largest.checked(maxSourcePixels: maxSourcePixels, for: what)
        _ = try header.size.checked(maxSourcePixels: maxSourcePixels, for: what)
        let format: ImageFormat = self == .png ? .png : .heic
        if let refusal = budget.refusal(format, width: header.largest.width, height: header.largest.height,
                                        bytes: header.decodingBytes + extraBytes(header.size)) { throw refusal }
        return header
    }

    /// RGB rows of the `size` its header said, in the decoder's own buffer (never copied); a
    /// PNG's transparent pixels composed onto `matte`.
    func rgb(_ source: UnsafeRawBufferPointer, _ size: Image, matte: Matte) throws(PreviewError) -> RGBRows {
        switch self {
        case .png: try PNGImage.rgb(source, size, matte: matte)
        case .heic: try HEICImage.rgb(source, size)
        }
    }
}

/// What decoding a whole image takes (`WholeImage.header`).
struct WholeImageHeader {
    /// The image as decoded.
    let size: Image
    /// The largest image its decoder makes on the way (a HEIC grid's canvas; the image itself).
    let largest: Image
    /// The most memory decoding holds.
    let decodingBytes: Int
}

/// What an image's transparent pixels are drawn onto: black for a panorama (the viewer's dark
/// around it), white for a logo (the page it sits on).
public enum Matte: Sendable {
    case black, white
}

/// An image's 8-bit RGB rows, a row every `stride` bytes from `base`, in the buffer its decoder
/// filled; that buffer is let go when this is. Read on the thread that holds it.
final class RGBRows {
    let size: Image
    let base: UnsafePointer<UInt8>
    let stride: Int
    private let release: () -> Void

    init(size: Image, base: UnsafePointer<UInt8>, stride: Int, release: @escaping () -> Void) {
        (self.size, self.base, self.stride, self.release) = (size, base, stride, release)
    }

    deinit { release() }
}

extension DecodeBudget {
    /// Why decoding a `width` × `height` image of `format` whole, taking `bytes` (its pixels and
    /// the codec's own buffers), would be over the budget; nil when not.
    func refusal(_ format: ImageFormat, width: Int, height: Int, bytes: Int) -> PreviewError? {
        guard bytes > maxBytes else { return nil }
        return PreviewError("decoding the \(width) × \(height) \(format.name) would take \(bytes >> 20) MiB, more than the \(maxBytes >> 20) MiB its decoding may")
    }
}
