import Testing
import NTHashing
@testable import NTServiceModel
@testable import NTServiceStorage

@Suite struct PartDigestsTests {
    @Test(arguments: [[10, 10, 10, 3], [1, 29, 3], [33], [7, 7, 7, 7, 5], [30, 3], [30]])
    func eachPartIsHashedWhateverTheChunksAre(_ chunks: [Int]) {
        let bytes = (0..<chunks.reduce(0, +)).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        var digests = PartDigests(partSize: 10)
        var start = 0
        for count in chunks {
            bytes[start..<(start + count)].withUnsafeBytes { digests.add($0) }
            start += count
        }
        let hex = { (slice: ArraySlice<UInt8>) in ByteEncoding.hex(StreamingDigest.hash(.sha256, Array(slice))) }
        let whole = stride(from: 0, to: bytes.count - bytes.count % 10, by: 10).map { hex(bytes[$0..<($0 + 10)]) }
        #expect(digests.whole == whole)
        #expect(digests.finish() == hex(bytes[(bytes.count - bytes.count % 10)...]))
    }
}
