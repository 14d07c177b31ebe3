import NTHTTPCore
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTUploads
@testable import NTWebhooks

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
    if let head = creationHead(metadata: values[0], length: values[2]),
       let creation = try? CreationCommand.post(head, maxLength: 1 << 30) {
        precondition((0...(1 << 30)).contains(creation.length ?? -1), "a length over the limit")
    }
    return 0
}

/// A tus creation's head with these Upload-Metadata and Upload-Length values (nil when they
/// cannot stand in a header: a line break in them, say).
private func creationHead(metadata: String, length: String) -> RequestHead? {
    var decoder = RequestDecoder(maxHeadBytes: 64 << 10)
    let bytes = Array("POST /v1/uploads HTTP/1.1\r\nHost: t\r\nTus-Resumable: 1.0.0\r\nUpload-Metadata: \(metadata)\r\nUpload-Length: \(length)\r\n\r\n".utf8)
    guard let step = try? bytes.withUnsafeBytes({ try decoder.next($0) }), case .head(let head) = step.event else { return nil }
    return head
}
