import CNTHeif

/// HEIC images (HEVC in a HEIF container, what an iPhone's camera writes), with libheif and
/// its HEVC decoder: the primary image, its rotation and mirroring applied, decoded whole to
/// 8-bit RGB. Before libheif reads anything, the container's items are counted (a grid image's
/// tiles are items: a grid of thousands is refused unread); its size is the primary image's,
/// from the container, before any pixel is decoded.
enum HEICImage {
    /// The primary image's size (after its rotation), once the items the container lists are
    /// found within `maxItems`.
    static func header(_ source: UnsafeRawBufferPointer, maxItems: Int) throws(PreviewError) -> Image {
        guard let items = HEIFBoxes.itemCount(source) else { throw PreviewError("not a readable HEIC: its meta box lists no items") }
        guard items <= maxItems else {
            throw PreviewError("the HEIC holds \(items) images (a grid's tiles), more than the \(maxItems) an image may have to be decoded")
        }
        return try primary(source) { handle in
            Image(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
        }
    }

    /// What decoding a `size` HEIC takes at most: libheif's decoded 4:2:0 planes (up to 16 bits
    /// a sample: 3 bytes a pixel) and their RGB conversion (3), and the HEVC decoder's pictures.
    static func decodingBytes(_ size: Image) -> Int {
        size.width * size.height * 6 + (32 << 20)
    }

    /// The image as RGB rows (libheif's own image, held until the rows are let go), checked to
    /// be the `size` its header said.
    static func rgb(_ source: UnsafeRawBufferPointer, _ size: Image) throws(PreviewError) -> RGBRows {
        try primary(source) { handle throws(PreviewError) in
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
        let xmp = try? primary(source) { handle -> [UInt8]? in
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

    /// `body` with the file's primary image.
    private static func primary<T>(_ source: UnsafeRawBufferPointer, _ body: (OpaquePointer) throws(PreviewError) -> T) throws(PreviewError) -> T {
        guard let base = source.baseAddress, !source.isEmpty else { throw PreviewError("an empty file is not a HEIC") }
        guard let context = heif_context_alloc() else { throw PreviewError("libheif cannot start a decoder") }
        defer { heif_context_free(context) }
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

/// The boxes of an ISO base media file (HEIF), read as far as the item count: the `meta` box's
/// `iinf`. Bounded by the bytes given; nil when they do not hold it.
enum HEIFBoxes {
    static func itemCount(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let meta = child("meta", of: 0..<bytes.count, in: bytes), meta.count >= 4,
              let info = child("iinf", of: meta.lowerBound + 4..<meta.upperBound, in: bytes), info.count >= 6 else { return nil }
        // A full box: version, flags, then the count, 16 bits in version 0 and 32 after.
        let start = info.lowerBound
        return bytes[start] == 0 ? Int(integer(bytes, start + 4, 2)) : (info.count >= 8 ? Int(integer(bytes, start + 4, 4)) : nil)
    }

    /// The body of the first box of `type` among the boxes that fill `range`.
    private static func child(_ type: String, of range: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        let wanted = Array(type.utf8)
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var size = Int(integer(bytes, offset, 4)), header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { return nil }
                let large = integer(bytes, offset + 8, 8)
                guard large <= UInt64(range.upperBound - offset) else { return nil }
                (size, header) = (Int(large), 16)
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, offset + size <= range.upperBound else { return nil }
            if Array(bytes[offset + 4..<offset + 8]) == wanted { return offset + header..<offset + size }
            offset += size
        }
        return nil
    }

    private static func integer(_ bytes: UnsafeRawBufferPointer, _ offset: Int, _ count: Int) -> UInt64 {
        bytes[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
