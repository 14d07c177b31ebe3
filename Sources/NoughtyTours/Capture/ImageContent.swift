import NTAPIModel
import Foundation

/// What an image file holds, told by its bytes rather than its name: the format and the pixel
/// dimensions from the format's own header (a JPEG's frame header, a PNG's IHDR, a HEIF's
/// `ispe` property). Pure: it reads through a closure, so tests hand it bytes.
public struct ImageContent: Sendable, Equatable {
    /// JPEG, PNG or HEIC, by signature and by name, as the server tells them apart too.
    public typealias Format = PanoramaImageFormat

    public let format: Format
    public let width: Int
    public let height: Int

    /// The most header boxes or segments read before the dimensions must have come: a file
    /// that loops or nests without end is refused, never walked forever.
    static let maxSteps = 4_096

    /// Reads `count` bytes at `offset` (fewer at the end of the file).
    typealias Reader = (_ offset: Int64, _ count: Int) -> [UInt8]

    /// The image `name` holds, whose bytes `read` gives (`size` of them); a reason it is not
    /// one a panorama can be, in words that name the file.
    static func inspect(name: String, size: Int64, _ read: Reader) -> Result<ImageContent, NoughtyToursError> {
        guard let claimed = Format(fileName: name) else {
            return .failure(.invalidInput("a panorama is a .jpg, .heic or .png file, not \(name)"))
        }
        guard size > 0 else { return .failure(.invalidInput("\(name) is empty (0 bytes), not a \(claimed.rawValue) image")) }
        let head = read(0, 32)
        guard let format = Format(signature: head) else {
            let start = head.prefix(8).map { String(format: "%02x", $0) }.joined()
            return .failure(.invalidInput("\(name) is not a JPEG, HEIC or PNG image (it starts with hex \(start))"))
        }
        guard format == claimed else {
            return .failure(.invalidInput("\(name) holds a \(format.rawValue) image, but its name says \(claimed.rawValue): rename it"))
        }
        let dimensions: (Int, Int)?
        switch format {
        case .jpeg: dimensions = jpegDimensions(size: size, read)
        case .png: dimensions = pngDimensions(head)
        case .heic: dimensions = heifDimensions(size: size, read)
        }
        guard let (width, height) = dimensions else {
            return .failure(.invalidInput("\(name) is a damaged \(format.rawValue) image: its header gives no width and height"))
        }
        guard width > 0, height > 0 else {
            return .failure(.invalidInput("\(name) is a \(width)×\(height) \(format.rawValue) image: a panorama has pixels"))
        }
        return .success(ImageContent(format: format, width: width, height: height))
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    /// The first frame header's (SOFn) dimensions, walking the segments before it.
    private static func jpegDimensions(size: Int64, _ read: Reader) -> (Int, Int)? {
        var offset: Int64 = 2
        for _ in 0..<maxSteps {
            let bytes = read(offset, 9)
            guard bytes.count >= 2, bytes[0] == 0xFF else { return nil }
            let marker = bytes[1]
            switch marker {
            case 0xFF: // fill byte before a marker
                offset += 1
            case 0x01, 0xD0...0xD7: // standalone, no length
                offset += 2
            case 0xD9, 0xDA: // end of image, start of scan: no frame header came first
                return nil
            case 0xC0...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                guard bytes.count >= 9 else { return nil }
                return (bigEndian(bytes[7..<9]), bigEndian(bytes[5..<7]))
            default:
                guard bytes.count >= 4 else { return nil }
                let length = Int64(bigEndian(bytes[2..<4]))
                guard length >= 2 else { return nil }
                offset += 2 + length
            }
            guard offset < size else { return nil }
        }
        return nil
    }

    /// The IHDR chunk's dimensions, which the PNG specification puts first.
    private static func pngDimensions(_ head: [UInt8]) -> (Int, Int)? {
        guard head.count >= 24, Array(head[12..<16]) == Array("IHDR".utf8) else { return nil }
        return (bigEndian(head[16..<20]), bigEndian(head[20..<24]))
    }

    /// The largest `ispe` (image spatial extents) of meta/iprp/ipco: the primary image's
    /// (a grid's tiles carry smaller ones).
    private static func heifDimensions(size: Int64, _ read: Reader) -> (Int, Int)? {
        var steps = 0
        /// The boxes of `type` directly within [start, end).
        func boxes(_ type: String, from start: Int64, to end: Int64) -> [(body: Int64, end: Int64)] {
            var found: [(Int64, Int64)] = []
            var offset = start
            while offset + 8 <= end, steps < maxSteps {
                steps += 1
                let header = read(offset, 16)
                guard header.count >= 8 else { break }
                var boxSize = Int64(bigEndian(header[0..<4]))
                var headerSize: Int64 = 8
                if boxSize == 1 {
                    // A 64-bit size: one past Int64 (the top bit set) reads as negative and is refused below.
                    guard header.count >= 16 else { break }
                    boxSize = Int64(truncatingIfNeeded: header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                    headerSize = 16
                } else if boxSize == 0 {
                    boxSize = end - offset
                }
                guard boxSize >= headerSize, boxSize <= end - offset else { break }
                if String(decoding: header[4..<8], as: UTF8.self) == type { found.append((offset + headerSize, offset + boxSize)) }
                offset += boxSize
            }
            return found
        }
        var best: (Int, Int)?
        for meta in boxes("meta", from: 0, to: size) {
            for properties in boxes("iprp", from: meta.body + 4, to: meta.end) { // meta is a full box
                for container in boxes("ipco", from: properties.body, to: properties.end) {
                    for extents in boxes("ispe", from: container.body, to: container.end) {
                        let bytes = read(extents.body + 4, 8) // a full box: version and flags first
                        guard bytes.count == 8 else { continue }
                        // Each up to 2^32 - 1, so their product can pass Int.max: areas compare as Double.
                        let (width, height) = (bigEndian(bytes[0..<4]), bigEndian(bytes[4..<8]))
                        if Double(width) * Double(height) > (best.map { Double($0.0) * Double($0.1) } ?? -1) { best = (width, height) }
                    }
                }
            }
        }
        return best
    }

    /// The image a file holds, read from disk.
    public static func inspect(file path: String, name: String) -> Result<ImageContent, NoughtyToursError> {
        guard let handle = FileHandle(forReadingAtPath: path),
              let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value else {
            return .failure(.invalidInput("cannot read the image \(path)"))
        }
        defer { try? handle.close() }
        return inspect(name: name, size: size) { offset, count in
            guard offset >= 0, (try? handle.seek(toOffset: UInt64(offset))) != nil else { return [] }
            return (try? handle.read(upToCount: count)).map(Array.init) ?? []
        }
    }
}
