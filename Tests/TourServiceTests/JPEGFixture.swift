import NTImagePreviews

/// JPEGs for the preview tests, made with the preview module's own encoder.
enum JPEGFixture {
    static func panorama(width: Int) throws -> [UInt8] {
        try JPEGPreview.flat(width: width, height: width / 2, quality: 90, grey: false)
    }

    static func dimensions(_ jpeg: [UInt8]) -> [Int]? {
        JPEGPreview.dimensions(of: jpeg).map { [$0.width, $0.height] }
    }
}
