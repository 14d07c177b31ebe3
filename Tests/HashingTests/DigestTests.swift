import Testing
@testable import NTHashing

@Suite struct DigestTests {
    /// FIPS 180-2 test vectors.
    @Test func knownVectors() {
        let abc = Array("abc".utf8)
        #expect(ByteEncoding.hex(StreamingDigest.hash(.sha256, abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(ByteEncoding.hex(StreamingDigest.hash(.sha1, abc)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(ByteEncoding.hex(StreamingDigest.hash(.sha256, [])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func streamingInPiecesEqualsHashingAtOnce() {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let digest = StreamingDigest(.sha256)
        var offset = 0
        for size in [1, 63, 64, 65, 1000, 33_807] where offset < bytes.count {
            digest.update(Array(bytes[offset..<min(bytes.count, offset + size)]))
            offset += size
        }
        digest.update(Array(bytes[offset...]))
        #expect(digest.finish() == StreamingDigest.hash(.sha256, bytes))
    }

    @Test func copyCheckpointsWithoutDisturbingTheRunningDigest() {
        let digest = StreamingDigest(.sha256)
        digest.update(Array("hello ".utf8))
        let checkpoint = digest.copy()
        digest.update(Array("world".utf8))
        #expect(checkpoint.finish() == StreamingDigest.hash(.sha256, Array("hello ".utf8)))
        #expect(digest.finish() == StreamingDigest.hash(.sha256, Array("hello world".utf8)))
    }

    /// RFC 4648 §10 test vectors, both ways.
    @Test(arguments: [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
                      ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")])
    func base64Vectors(plain: String, encoded: String) {
        #expect(ByteEncoding.base64(Array(plain.utf8)) == encoded)
        #expect(ByteEncoding.bytes(fromBase64: encoded) == Array(plain.utf8))
    }

    @Test(arguments: ["Zg=", "Z===", "Zg==Zg==", "Zm9v!", "Zm=v", "=Zm9"])
    func malformedBase64IsRejected(text: String) {
        #expect(ByteEncoding.bytes(fromBase64: text) == nil)
    }

    @Test func hexRoundTripsAndRejectsNonHex() {
        #expect(ByteEncoding.bytes(fromHex: "00ffA0") == [0, 255, 160])
        #expect(ByteEncoding.hex([0, 255, 160]) == "00ffa0")
        #expect(ByteEncoding.bytes(fromHex: "abc") == nil)
        #expect(ByteEncoding.bytes(fromHex: "zz") == nil)
    }

    @Test func constantTimeEqualsComparesWholeValues() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(constantTimeEquals([], []))
    }
}

@Suite struct KeyedTests {
    /// RFC 4231, test case 2.
    @Test func hmacSHA256IsTheRFCsExample() {
        let mac = hmacSHA256(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        #expect(ByteEncoding.hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func aSealedSecretOpensUnderItsKeyOnlyAndUnchanged() throws {
        let box = try #require(SecretBox(key: Array(repeating: 7, count: 32)))
        let other = try #require(SecretBox(key: Array(repeating: 8, count: 32)))
        let sealed = box.seal(Array("a webhook's secret".utf8), nonce: Array(repeating: 1, count: 12))
        #expect(box.open(sealed) == Array("a webhook's secret".utf8))
        #expect(other.open(sealed) == nil)
        var changed = sealed
        changed[15] ^= 1
        #expect(box.open(changed) == nil)
        #expect(box.open(Array(sealed.prefix(20))) == nil)
        #expect(SecretBox(key: Array(repeating: 7, count: 16)) == nil)
    }
}
