import CNTHeif

/// HEIC images (HEVC in a HEIF container, what an iPhone's camera writes), with libheif and
/// its HEVC decoder: the primary image, its rotation and mirroring applied, decoded whole to
/// 8-bit RGB. Before libheif reads anything, the container is read (`HEIFBoxes`): its items
/// counted (a grid of thousands is refused unread), and the size of every image the decoder
/// will make (a grid's canvas and each tile, as the grid and the HEVC parameter sets say, not
/// as `ispe` claims) budgeted; libheif's own size limit is set to the largest of those, so a
/// file that makes it touch more is refused by libheif too.
enum HEICImage {
    /// What decoding the primary image holds at most, read from the container.
    struct Header {
        /// The image as decoded (after its rotation).
        let size: Image
        /// The largest image the decoder makes on the way (a grid's canvas, say).
        let largest: Image
        /// The most memory decoding holds: `decodingBytes` of the images it makes.
        let decodingBytes: Int
    }

    /// The primary image's size, once the items the container lists are found within
    /// `maxItems`, and the images its decoding makes read from the container.
    static func header(_ source: UnsafeRawBufferPointer, maxItems: Int) throws(PreviewError) -> Header {
        guard let boxes = HEIFBoxes(source), let items = boxes.itemCount else { throw PreviewError("not a readable HEIC: its meta box lists no items") }
        guard items <= maxItems else {
            throw PreviewError("the HEIC holds \(items) images (a grid's tiles), more than the \(maxItems) an image may have to be decoded")
        }
        guard let made = boxes.decodedImages() else { throw PreviewError("not a readable HEIC: the size of an image it holds cannot be read") }
        let size = try primary(source, limit: made) { handle in
            Image(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
        }
        // A tile is decoded and pasted one at a time; the canvas (or the image) is held whole.
        let canvas = ([size] + made).max { $0.width * $0.height < $1.width * $1.height } ?? size
        let tile = made.dropFirst().map { $0.width * $0.height }.max() ?? 0
        return Header(size: size, largest: canvas, decodingBytes: decodingBytes(pixels: canvas.width * canvas.height) + tile * 3)
    }

    /// What decoding `pixels` takes at most: libheif's decoded 4:2:0 planes (up to 16 bits a
    /// sample: 3 bytes a pixel) and their RGB conversion (3), and the HEVC decoder's pictures.
    private static func decodingBytes(pixels: Int) -> Int {
        pixels * 6 + (32 << 20)
    }

    /// The image as RGB rows (libheif's own image, held until the rows are let go), checked to
    /// be the `size` its header said.
    static func rgb(_ source: UnsafeRawBufferPointer, _ size: Image) throws(PreviewError) -> RGBRows {
        guard let made = HEIFBoxes(source)?.decodedImages() else { throw PreviewError("not a readable HEIC: the size of an image it holds cannot be read") }
        return try primary(source, limit: made) { handle throws(PreviewError) in
            var decoded: OpaquePointer?
            let failure = heif_decode_image(handle, &decoded, heif_colorspace_RGB, heif_chroma_interleaved_RGB, nil)
            guard failure.code == heif_error_Ok, let decoded else { throw PreviewError("the HEIC cannot be decoded: \(message(failure))") }
            var stride: Int32 = 0
            let width = Int(heif_image_get_width(decoded, heif_channel_interleaved)), height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
            guard width == size.width, height == size.height, let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride),
                  Int(stride) >= width * 3 else {
                heif_image_release(decoded)
                throw PreviewError("the HEIC decoded to \(width) × \(height), not the \(size.width) × \(size.height) its header said")
            }
            return RGBRows(size: size, base: plane, stride: Int(stride)) { heif_image_release(decoded) }
        }
    }

    /// The primary image's XMP (a `mime` item of `application/rdf+xml`), when it has one of at
    /// most `ImageMetadata.maxXMPBytes`. Its EXIF is left out: the container's own rotation,
    /// which libheif applies, is the image's orientation.
    static func metadata(_ source: UnsafeRawBufferPointer, maxItems: Int) -> ImageMetadata {
        guard let items = HEIFBoxes.itemCount(source), items <= maxItems else { return ImageMetadata() }
        let xmp = try? primary(source, limit: HEIFBoxes(source)?.decodedImages() ?? []) { handle -> [UInt8]? in
            let count = Int(heif_image_handle_get_number_of_metadata_blocks(handle, "mime"))
            guard count > 0 else { return nil }
            var ids = [heif_item_id](repeating: 0, count: min(count, 16))
            let listed = Int(heif_image_handle_get_list_of_metadata_block_IDs(handle, "mime", &ids, Int32(ids.count)))
            for id in ids.prefix(listed) {
                guard let type = heif_image_handle_get_metadata_content_type(handle, id), String(cString: type) == "application/rdf+xml" else { continue }
                let size = heif_image_handle_get_metadata_size(handle, id)
                guard size > 0, size <= ImageMetadata.maxXMPBytes else { continue }
                var bytes = [UInt8](repeating: 0, count: size)
                guard heif_image_handle_get_metadata(handle, id, &bytes).code == heif_error_Ok else { continue }
                return bytes
            }
            return nil
        }
        return ImageMetadata(exif: nil, xmp: xmp ?? nil)
    }

    /// `body` with the file's primary image, libheif refusing any image wider or taller than
    /// the largest of `limit` (the images the container says the decoding makes).
    private static func primary<T>(_ source: UnsafeRawBufferPointer, limit: [Image], _ body: (OpaquePointer) throws(PreviewError) -> T) throws(PreviewError) -> T {
        guard let base = source.baseAddress, !source.isEmpty else { throw PreviewError("an empty file is not a HEIC") }
        guard let context = heif_context_alloc() else { throw PreviewError("libheif cannot start a decoder") }
        defer { heif_context_free(context) }
        // libheif refuses an edge at or past its limit (a grid's) or past it (an ispe's).
        let edge = limit.map { max($0.width, $0.height) }.max() ?? 0
        heif_context_set_maximum_image_size_limit(context, Int32(clamping: edge + 1))
        let read = heif_context_read_from_memory_without_copy(context, base, source.count, nil)
        guard read.code == heif_error_Ok else { throw PreviewError("not a readable HEIC: \(message(read))") }
        var handle: OpaquePointer?
        let found = heif_context_get_primary_image_handle(context, &handle)
        guard found.code == heif_error_Ok, let handle else { throw PreviewError("the HEIC has no primary image: \(message(found))") }
        defer { heif_image_handle_release(handle) }
        return try body(handle)
    }

    private static func message(_ error: heif_error) -> String {
        error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
    }
}

/// The boxes of an ISO base media file (HEIF, ISO/IEC 23008-12) as far as a decoder's work is
/// concerned: the items of the `meta` box, the primary one, and for each the size libheif
/// decodes it at. A grid (`grid`) or overlay (`iovl`) is decoded at the canvas its own data
/// says and its tiles each at theirs; an `iden` at the image it names; a coded image at the
/// larger of its `ispe` and its HEVC parameter set's size. Nothing is taken from `ispe` alone.
/// Bounded by the bytes given: a box or field past them reads as nothing.
struct HEIFBoxes {
    private let bytes: UnsafeRawBufferPointer
    /// Item id to its type (`hvc1`, `grid`, …).
    private var types: [UInt32: String] = [:]
    private var primary: UInt32?
    /// Item id to where its data is: (construction method, offset, length), the offset absolute
    /// in the file (method 0) or in `idat` (method 1).
    private var locations: [UInt32: (method: Int, offset: Int, length: Int)] = [:]
    private var idat: Range<Int>?
    /// Item id to the items its `dimg` references name, in order.
    private var derived: [UInt32: [UInt32]] = [:]
    /// The item properties (`ipco`'s boxes) and each item's, by 1-based index.
    private var properties: [Range<Int>] = []
    private var associations: [UInt32: [Int]] = [:]
    /// The items `iinf` counts.
    private(set) var itemCount: Int?

    /// The number of items the container lists (a grid image's tiles are items).
    static func itemCount(_ bytes: UnsafeRawBufferPointer) -> Int? {
        HEIFBoxes(bytes)?.itemCount
    }

    init?(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        guard let meta = Self.children(of: 0..<bytes.count, in: bytes).first(where: { $0.type == "meta" }), meta.body.count >= 4 else { return nil }
        for box in Self.children(of: meta.body.lowerBound + 4..<meta.body.upperBound, in: bytes) {
            switch box.type {
            case "iinf": readItemInfo(box.body)
            case "pitm": primary = fullBox(box.body).flatMap { version, at in read(at, version == 0 ? 2 : 4) }.map(UInt32.init)
            case "iloc": readLocations(box.body)
            case "iref": readReferences(box.body)
            case "iprp": readProperties(box.body)
            case "idat": idat = box.body
            default: break
            }
        }
        guard itemCount != nil else { return nil }
    }

    /// The images libheif decodes to make the primary image, each at its decoded size: the
    /// canvas and each tile of a grid or overlay. Empty when the container does not say (libheif
    /// then refuses it too); nil when an item's size cannot be read.
    func decodedImages() -> [Image]? {
        guard let primary else { return [] }
        return images(of: primary, depth: 0)
    }

    private func images(of item: UInt32, depth: Int) -> [Image]? {
        // libheif follows references a few levels at most; a loop is no image.
        guard depth < 4, let type = types[item] else { return nil }
        switch type {
        case "grid", "iovl":
            guard let canvas = canvas(of: item, overlay: type == "iovl") else { return nil }
            var found = [canvas]
            for tile in Set(derived[item] ?? []) {
                guard let tiles = images(of: tile, depth: depth + 1) else { return nil }
                found += tiles
            }
            return found
        case "iden":
            guard let source = derived[item], source.count == 1 else { return nil }
            return images(of: source[0], depth: depth + 1)
        default:
            // A coded image: at its ispe, or its coded size where that is larger.
            let sizes = [ispe(of: item), codedSize(of: item)].compactMap { $0 }
            guard let first = sizes.first else { return nil }
            return [sizes.dropFirst().reduce(first) { Image(width: max($0.width, $1.width), height: max($0.height, $1.height)) }]
        }
    }

    /// A grid's output size (ISO/IEC 23008-12 §6.6.2.3.2) or an overlay's canvas (§6.6.2.4.2).
    private func canvas(of item: UInt32, overlay: Bool) -> Image? {
        guard let data = data(of: item), data.count >= 4 else { return nil }
        let large = bytes[data.lowerBound + 1] & 1 == 1
        // grid: version, flags, rows - 1, columns - 1; iovl: version, flags, four 16-bit fill values.
        let at = data.lowerBound + (overlay ? 2 + 8 : 4), field = large ? 4 : 2
        guard let width = read(at, field, within: data), let height = read(at + field, field, within: data), width > 0, height > 0 else { return nil }
        return Image(width: Int(width), height: Int(height))
    }

    private func ispe(of item: UInt32) -> Image? {
        for index in associations[item] ?? [] where properties.indices.contains(index - 1) {
            let box = properties[index - 1]
            guard box.count >= 4 + 12, type(at: box.lowerBound - 4) == "ispe" else { continue }
            guard let width = read(box.lowerBound + 4, 4), let height = read(box.lowerBound + 8, 4) else { return nil }
            return Image(width: Int(width), height: Int(height))
        }
        return nil
    }

    /// The picture size of an HEVC image's sequence parameter set (in its `hvcC`).
    private func codedSize(of item: UInt32) -> Image? {
        for index in associations[item] ?? [] where properties.indices.contains(index - 1) {
            let box = properties[index - 1]
            guard type(at: box.lowerBound - 4) == "hvcC" else { continue }
            return HEVCParameterSets.pictureSize(UnsafeRawBufferPointer(rebasing: bytes[box]))
        }
        return nil
    }

    /// The bytes of an item's data, when one extent holds it within the file.
    private func data(of item: UInt32) -> Range<Int>? {
        guard let location = locations[item] else { return nil }
        let start: Int
        switch location.method {
        case 0: start = location.offset
        case 1:
            guard let idat else { return nil }
            start = idat.lowerBound + location.offset
        default: return nil
        }
        guard location.offset >= 0, location.length > 0, start <= bytes.count - location.length else { return nil }
        return start..<start + location.length
    }

    // MARK: Reading the boxes

    private mutating func readItemInfo(_ body: Range<Int>) {
        guard let (version, at) = fullBox(body), let count = read(at, version == 0 ? 2 : 4) else { return }
        itemCount = Int(count)
        for entry in Self.children(of: at + (version == 0 ? 2 : 4)..<body.upperBound, in: bytes) where entry.type == "infe" {
            // Versions 2 and 3: the id (16 or 32 bits), the protection index, the item's type.
            guard let (entryVersion, start) = fullBox(entry.body), entryVersion >= 2 else { continue }
            let idSize = entryVersion == 2 ? 2 : 4
            guard let id = read(start, idSize, within: entry.body), start + idSize + 6 <= entry.body.upperBound else { continue }
            types[UInt32(id)] = type(at: start + idSize + 2)
        }
    }

    private mutating func readLocations(_ body: Range<Int>) {
        guard let (version, at) = fullBox(body), at + 2 <= body.upperBound else { return }
        let offsetSize = Int(bytes[at] >> 4), lengthSize = Int(bytes[at] & 0xF), baseSize = Int(bytes[at + 1] >> 4)
        let indexSize = version >= 1 ? Int(bytes[at + 1] & 0xF) : 0
        guard let count = read(at + 2, version < 2 ? 2 : 4, within: body) else { return }
        var cursor = at + 2 + (version < 2 ? 2 : 4)
        for _ in 0..<min(Int(count), 1 << 16) {
            guard let id = read(cursor, version < 2 ? 2 : 4, within: body) else { return }
            cursor += version < 2 ? 2 : 4
            var method = 0
            if version >= 1 {
                guard let field = read(cursor, 2, within: body) else { return }
                method = Int(field & 0xF)
                cursor += 2
            }
            cursor += 2 // the data reference index
            guard let base = baseSize == 0 ? 0 : read(cursor, baseSize, within: body) else { return }
            cursor += baseSize
            guard let extents = read(cursor, 2, within: body) else { return }
            cursor += 2
            for extent in 0..<Int(extents) {
                cursor += indexSize
                guard let offset = offsetSize == 0 ? 0 : read(cursor, offsetSize, within: body),
                      let length = lengthSize == 0 ? 0 : read(cursor + offsetSize, lengthSize, within: body) else { return }
                cursor += offsetSize + lengthSize
                // One extent is what grids and overlays use; more, and the item reads as unknown.
                if extent == 0, extents == 1, base <= UInt64(Int.max / 2), offset <= UInt64(Int.max / 2), length <= UInt64(Int.max / 2) {
                    locations[UInt32(id)] = (method, Int(base + offset), Int(length))
                }
            }
        }
    }

    private mutating func readReferences(_ body: Range<Int>) {
        guard let (version, at) = fullBox(body) else { return }
        let idSize = version == 0 ? 2 : 4
        for reference in Self.children(of: at..<body.upperBound, in: bytes) where reference.type == "dimg" {
            guard let from = read(reference.body.lowerBound, idSize, within: reference.body),
                  let count = read(reference.body.lowerBound + idSize, 2, within: reference.body) else { continue }
            var to: [UInt32] = []
            for index in 0..<Int(count) {
                guard let id = read(reference.body.lowerBound + idSize + 2 + index * idSize, idSize, within: reference.body) else { break }
                to.append(UInt32(id))
            }
            derived[UInt32(from), default: []] += to
        }
    }

    private mutating func readProperties(_ body: Range<Int>) {
        for box in Self.children(of: body, in: bytes) {
            if box.type == "ipco" {
                properties = Self.children(of: box.body, in: bytes).map(\.body)
            } else if box.type == "ipma", let (version, at) = fullBox(box.body), let count = read(at, 4, within: box.body) {
                let flags = bytes[box.body.lowerBound + 3], idSize = version < 1 ? 2 : 4, indexSize = flags & 1 == 1 ? 2 : 1
                var cursor = at + 4
                for _ in 0..<min(Int(count), 1 << 16) {
                    guard let id = read(cursor, idSize, within: box.body), let listed = read(cursor + idSize, 1, within: box.body) else { return }
                    cursor += idSize + 1
                    var indices: [Int] = []
                    for _ in 0..<Int(listed) {
                        guard let entry = read(cursor, indexSize, within: box.body) else { return }
                        indices.append(Int(entry) & (indexSize == 2 ? 0x7FFF : 0x7F)) // the top bit says "essential"
                        cursor += indexSize
                    }
                    associations[UInt32(id)] = indices
                }
            }
        }
    }

    /// A full box's version, and where its fields after the flags begin.
    private func fullBox(_ body: Range<Int>) -> (version: UInt8, fields: Int)? {
        body.count >= 4 ? (bytes[body.lowerBound], body.lowerBound + 4) : nil
    }

    private func type(at offset: Int) -> String {
        String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
    }

    /// A big-endian unsigned field of `count` bytes at `offset`, within `range` (the file).
    private func read(_ offset: Int, _ count: Int, within range: Range<Int>? = nil) -> UInt64? {
        let range = range ?? 0..<bytes.count
        guard offset >= range.lowerBound, count <= 8, offset <= range.upperBound - count else { return nil }
        return bytes[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The boxes that fill `range`: their types and bodies.
    private static func children(of range: Range<Int>, in bytes: UnsafeRawBufferPointer) -> [(type: String, body: Range<Int>)] {
        var found: [(String, Range<Int>)] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var size = Int(bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt64($1) }), header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { break }
                let large = bytes[offset + 8..<offset + 16].reduce(0) { $0 << 8 | UInt64($1) }
                guard large <= UInt64(range.upperBound - offset) else { break }
                (size, header) = (Int(large), 16)
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, offset + size <= range.upperBound else { break }
            found.append((String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), offset + header..<offset + size))
            offset += size
        }
        return found
    }
}

/// An HEVC decoder configuration (`hvcC`, ISO/IEC 14496-15 §8.3.3.1): the picture size its
/// sequence parameter set says (H.265 §7.3.2.2), which is what the decoder allocates.
enum HEVCParameterSets {
    static func pictureSize(_ hvcC: UnsafeRawBufferPointer) -> Image? {
        // 22 bytes of configuration, then arrays of NAL units by type.
        guard hvcC.count > 23 else { return nil }
        var at = 23
        for _ in 0..<Int(hvcC[22]) {
            guard at + 3 <= hvcC.count else { return nil }
            let type = hvcC[at] & 0x3F, count = Int(hvcC[at + 1]) << 8 | Int(hvcC[at + 2])
            at += 3
            for _ in 0..<count {
                guard at + 2 <= hvcC.count else { return nil }
                let length = Int(hvcC[at]) << 8 | Int(hvcC[at + 1])
                guard at + 2 + length <= hvcC.count else { return nil }
                if type == 33, let size = spsSize(hvcC[at + 2..<at + 2 + length]) { return size }
                at += 2 + length
            }
        }
        return nil
    }

    /// pic_width_in_luma_samples and pic_height_in_luma_samples of an SPS NAL unit.
    private static func spsSize(_ nal: Slice<UnsafeRawBufferPointer>) -> Image? {
        // The payload without its two-byte header and without emulation prevention (00 00 03).
        var payload: [UInt8] = []
        var zeros = 0
        for byte in nal.dropFirst(2) {
            if zeros >= 2, byte == 3 { zeros = 0; continue }
            zeros = byte == 0 ? zeros + 1 : 0
            payload.append(byte)
        }
        var bits = BitReader(payload)
        guard let header = bits.read(8) else { return nil } // vps id (4), max sub-layers - 1 (3), nesting (1)
        let subLayers = Int(header >> 1 & 7)
        // profile_tier_level: 88 bits of general profile, 8 of level, then per sub-layer flags.
        guard bits.skip(96) else { return nil }
        var present: [(profile: Bool, level: Bool)] = []
        for _ in 0..<subLayers {
            guard let profile = bits.read(1), let level = bits.read(1) else { return nil }
            present.append((profile == 1, level == 1))
        }
        if subLayers > 0 { guard bits.skip(2 * (8 - subLayers)) else { return nil } }
        for layer in present {
            guard bits.skip((layer.profile ? 88 : 0) + (layer.level ? 8 : 0)) else { return nil }
        }
        guard bits.exponentialGolomb() != nil, let chroma = bits.exponentialGolomb() else { return nil } // sps id, chroma format
        if chroma == 3 { guard bits.skip(1) else { return nil } }
        guard let width = bits.exponentialGolomb(), let height = bits.exponentialGolomb(), width > 0, height > 0,
              width < 1 << 20, height < 1 << 20 else { return nil }
        return Image(width: width, height: height)
    }

    private struct BitReader {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func read(_ count: Int) -> UInt64? {
            guard count <= 64, position + count <= bytes.count * 8 else { return nil }
            var value: UInt64 = 0
            for _ in 0..<count {
                value = value << 1 | UInt64(bytes[position / 8] >> (7 - position % 8) & 1)
                position += 1
            }
            return value
        }

        mutating func skip(_ count: Int) -> Bool {
            guard position + count <= bytes.count * 8 else { return false }
            position += count
            return true
        }

        /// ue(v): leading zeros, a one, then as many bits.
        mutating func exponentialGolomb() -> Int? {
            var zeros = 0
            while true {
                guard let bit = read(1) else { return nil }
                if bit == 1 { break }
                zeros += 1
                guard zeros < 32 else { return nil }
            }
            guard let rest = read(zeros) else { return nil }
            return (1 << zeros) - 1 + Int(rest)
        }
    }
}
