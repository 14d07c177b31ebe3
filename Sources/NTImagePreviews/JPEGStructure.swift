#if canImport(Glibc)
import Glibc
#endif

/// What a JPEG's markers say before any of it is decoded: its frame (size, components,
/// progressive or not) and how many scans it has. A progressive or multi-scan JPEG is decoded
/// into a coefficient buffer of the whole image, whatever the output's scale, and every scan
/// is a pass over it: 1.7 MB of scans can ask for 1.6 GB and minutes of CPU. Reading the
/// markers costs one pass over the bytes (entropy-coded data is skipped with memchr).
public struct JPEGStructure: Equatable, Sendable {
    public struct Component: Equatable, Sendable {
        public var horizontal: Int
        public var vertical: Int
    }

    public var width: Int
    public var height: Int
    public var components: [Component]
    public var progressive: Bool
    public var scans: Int

    /// Whether libjpeg keeps every coefficient of the image in memory while decoding.
    public var buffersCoefficients: Bool { progressive || scans > 1 }

    /// The memory decoding it into `outputBytes` of output takes: its coefficient buffer besides.
    public func decodingBytes(outputBytes: Int) -> Int { coefficientBytes + outputBytes }

    /// The bytes of that coefficient buffer (64 coefficients of 2 bytes per 8×8 block of each
    /// component, blocks padded to whole MCUs); 0 for a single-scan JPEG, decoded row by row.
    public var coefficientBytes: Int {
        guard buffersCoefficients else { return 0 }
        let maxH = components.map(\.horizontal).max() ?? 1, maxV = components.map(\.vertical).max() ?? 1
        let mcuColumns = (width + 8 * maxH - 1) / (8 * maxH), mcuRows = (height + 8 * maxV - 1) / (8 * maxV)
        return components.reduce(0) { total, component in
            total + mcuColumns * component.horizontal * mcuRows * component.vertical * 128
        }
    }

    /// Reads the markers of `bytes`: nil when they are not a JPEG's (no SOI, no frame before
    /// the first scan, a segment running past the end). A file cut short after its first
    /// scan still reads, with the scans it has.
    public static func read(_ bytes: UnsafeRawBufferPointer) -> JPEGStructure? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var frame: JPEGStructure?
        // A frame with at least one scan is what a decoder can show something of.
        func found() -> JPEGStructure? { (frame?.scans ?? 0) > 0 ? frame : nil }
        var index = 2
        while index < bytes.count {
            guard bytes[index] == 0xFF else { return found() }
            // Fill bytes: any number of 0xFF before a marker.
            while index < bytes.count && bytes[index] == 0xFF { index += 1 }
            guard index < bytes.count else { break }
            let marker = bytes[index]
            index += 1
            switch marker {
            case 0xD9: return found()
            case 0x01, 0xD0...0xD8: continue
            default: break
            }
            guard index + 2 <= bytes.count else { break }
            let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            guard length >= 2, index + length <= bytes.count else { return found() }
            let segment = UnsafeRawBufferPointer(rebasing: bytes[(index + 2)..<(index + length)])
            index += length
            switch marker {
            case 0xC0...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                guard frame == nil, let read = Self.frame(segment, marker: marker) else { return nil }
                frame = read
            case 0xDA:
                guard frame != nil else { return nil }
                frame!.scans += 1
                index = endOfEntropyData(bytes, from: index)
            default:
                continue
            }
        }
        return found()
    }

    /// A SOFn segment: precision, height, width, then each component's id, sampling factors
    /// and quantization table.
    private static func frame(_ segment: UnsafeRawBufferPointer, marker: UInt8) -> JPEGStructure? {
        guard segment.count >= 6 else { return nil }
        let height = Int(segment[1]) << 8 | Int(segment[2])
        let width = Int(segment[3]) << 8 | Int(segment[4])
        let count = Int(segment[5])
        guard count > 0, segment.count >= 6 + 3 * count else { return nil }
        let components = (0..<count).map { component in
            let factors = segment[6 + 3 * component + 1]
            return Component(horizontal: max(1, Int(factors >> 4)), vertical: max(1, Int(factors & 0x0F)))
        }
        return JPEGStructure(width: width, height: height, components: components,
                             progressive: [0xC2, 0xC6, 0xCA, 0xCE].contains(marker), scans: 0)
    }

    /// Where the entropy-coded data from `start` ends: at the first 0xFF that is neither a
    /// stuffed byte (FF 00) nor a restart marker (FF D0–D7), or at the end of the bytes.
    private static func endOfEntropyData(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            guard let found = memchr(bytes.baseAddress! + index, 0xFF, bytes.count - index) else { return bytes.count }
            index = bytes.baseAddress!.distance(to: UnsafeRawPointer(found))
            guard index + 1 < bytes.count else { return bytes.count }
            let next = bytes[index + 1]
            if next == 0x00 || (0xD0...0xD7).contains(next) {
                index += 2
            } else if next == 0xFF {
                index += 1
            } else {
                return index
            }
        }
        return bytes.count
    }
}

/// What one preview's decoding may take: memory (the coefficient buffer of a progressive or
/// multi-scan JPEG, and the decoded pixels), scans (each a pass over those coefficients), and a
/// HEIC's images.
public struct DecodeBudget: Sendable, Equatable {
    public var maxBytes: Int
    public var maxScans: Int
    /// Images a HEIC container may hold (a grid image's tiles are each one).
    public var maxItems: Int

    /// The configuration's defaults (`maxPreviewDecodeBytes`, `maxPreviewScans`, `maxPreviewItems`).
    public static let standard = DecodeBudget(maxBytes: 256 << 20, maxScans: 64, maxItems: 1024)

    public init(maxBytes: Int, maxScans: Int, maxItems: Int = 1024) {
        self.maxBytes = maxBytes
        self.maxScans = maxScans
        self.maxItems = maxItems
    }

    /// Why decoding `structure` to `decodedPixels` RGB pixels would be over the budget; nil when not.
    public func refusal(_ structure: JPEGStructure, decodedPixels: Int) -> PreviewError? {
        refusal(structure, outputBytes: decodedPixels * 3)
    }

    /// Why decoding `structure` into `outputBytes` of output would be over the budget; nil when not.
    public func refusal(_ structure: JPEGStructure, outputBytes: Int) -> PreviewError? {
        if structure.scans > maxScans {
            return PreviewError("the JPEG has \(structure.scans) scans, more than the \(maxScans) an image may have to be decoded")
        }
        let bytes = structure.decodingBytes(outputBytes: outputBytes)
        if bytes > maxBytes {
            return PreviewError("decoding the \(structure.width) × \(structure.height) JPEG\(structure.progressive ? " (progressive)" : "") "
                                + "would take \(bytes >> 20) MiB, more than the \(maxBytes >> 20) MiB its decoding may")
        }
        return nil
    }
}
