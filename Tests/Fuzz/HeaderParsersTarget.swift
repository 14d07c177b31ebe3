@testable import NTTourService

// libFuzzer target: the header parsers of uploads: tus Upload-Metadata, Upload-Checksum,
// Upload-Offset/Length and the whole creation request, and Repr-Digest. The input is split
// into three header values at its first two bytes. Any answer but a crash or a hang is fine;
// a parsed value must also be what was said (checked where it can be).
public func fuzzHeaderParsers(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let first = count > 0 ? Int(bytes[0]) % (count + 1) : 0
    let second = count > 1 ? first + Int(bytes[1]) % (count - first + 1) : first
    let values = [bytes[0..<first], bytes[first..<second], bytes[second...]].map { String(decoding: $0, as: UTF8.self) }
    if let pairs = try? TusHeaders.metadata(values[0]) {
        precondition(pairs.keys.allSatisfy { !$0.isEmpty && !$0.contains(",") && !$0.contains(" ") }, "a metadata key with a separator")
    }
    if let (algorithm, digest) = try? TusHeaders.checksum(values[1]) ?? nil {
        precondition(digest.count == algorithm.byteCount, "a checksum of the wrong length")
    }
    if let number = try? TusHeaders.integer(values[2], "Upload-Offset") { precondition(number >= 0, "a negative offset") }
    if let digest = try? ReprDigest.sha256(values[1]) ?? nil { precondition(digest.count == 32, "a sha-256 of the wrong length") }
    if let upload = try? UploadRequest.parse(length: values[2], metadata: values[0], maxLength: 1 << 30) {
        precondition((0...(1 << 30)).contains(upload.length), "a length over the limit")
    }
    return 0
}
