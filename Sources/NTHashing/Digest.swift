import CNTCrypto

/// The digest algorithms the service uses: SHA-256 for panorama digests (RFC 9530
/// `Repr-Digest`) and SHA-1 / SHA-256 for tus `Upload-Checksum`.
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha1
    case sha256

    /// The length of a finished digest in bytes.
    public var byteCount: Int {
        switch self {
        case .sha1: return 20
        case .sha256: return 32
        }
    }

    /// The implementation, fetched from OpenSSL's provider once: passing EVP_sha256() makes
    /// OpenSSL 3 look it up again on every digest.
    fileprivate var evp: OpaquePointer {
        switch self {
        case .sha1: return Self.sha1Implementation
        case .sha256: return Self.sha256Implementation
        }
    }

    nonisolated(unsafe) private static let sha1Implementation: OpaquePointer = fetch("SHA1")
    nonisolated(unsafe) private static let sha256Implementation: OpaquePointer = fetch("SHA256")

    private static func fetch(_ name: String) -> OpaquePointer {
        guard let md = EVP_MD_fetch(nil, name, nil) else { fatalError("OpenSSL has no \(name)") }
        return md
    }
}

/// A running digest, fed in pieces as bytes stream in, so that a body is never read twice.
/// Not thread-safe: it may move between threads, but its owner (or the lock that guards it)
/// makes sure one thread at a time uses it.
public final class StreamingDigest: @unchecked Sendable {
    public let algorithm: DigestAlgorithm
    private let context: OpaquePointer

    public init(_ algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        // EVP_MD_CTX_new fails only when malloc does; there is no way to go on then.
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
        self.context = context
        precondition(EVP_DigestInit_ex(context, algorithm.evp, nil) == 1, "EVP_DigestInit_ex failed")
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes to the digest.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(EVP_DigestUpdate(context, base, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    /// Adds bytes to the digest.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// A digest of the bytes so far that leaves this one running, for a checkpoint.
    public func copy() -> StreamingDigest {
        let other = StreamingDigest(algorithm)
        precondition(EVP_MD_CTX_copy_ex(other.context, context) == 1, "EVP_MD_CTX_copy_ex failed")
        return other
    }

    /// The digest of everything fed so far. The digest cannot be fed afterwards.
    public func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &out, &length) == 1, "EVP_DigestFinal_ex failed")
        return Array(out.prefix(Int(length)))
    }

    /// The digest of a whole byte sequence at once.
    /// One call, no context to allocate: tokens are hashed on every request.
    public static func hash(_ algorithm: DigestAlgorithm, _ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: algorithm.byteCount)
        var length: UInt32 = 0
        let done = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &out, &length, algorithm.evp, nil)
        }
        precondition(done == 1 && Int(length) == algorithm.byteCount, "EVP_Digest failed")
        return out
    }
}

/// Compares two byte sequences in time that depends only on their length, for tokens and
/// secrets (a timing difference must not tell how many leading bytes were right).
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 }
    }
}
