import CNTCrypto

/// HMAC-SHA256 of a message under a key (a webhook's signature, Standard Webhooks).
public func hmacSHA256(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    let done = key.withUnsafeBytes { keyBytes in
        message.withUnsafeBytes { messageBytes in
            HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                 messageBytes.count, &out, &length)
        }
    }
    precondition(done != nil && length == 32, "HMAC-SHA256 failed")
    return out
}

/// Secrets kept at rest under a key held elsewhere (AES-256-GCM): a sealed value is the
/// 12-byte nonce, the ciphertext and the 16-byte tag; opening checks the tag, so a changed or
/// foreign value is refused, not misread.
public struct SecretBox: Sendable {
    public static let keyBytes = 32
    private let key: [UInt8]

    /// nil unless the key is 32 bytes.
    public init?(key: [UInt8]) {
        guard key.count == Self.keyBytes else { return nil }
        self.key = key
    }

    /// A key for another purpose, derived from this one (HMAC-SHA256 of `label`): what it
    /// authenticates cannot be confused with what this key seals.
    public func derivedKey(_ label: String) -> [UInt8] {
        hmacSHA256(key: key, Array(label.utf8))
    }

    public func seal(_ plaintext: [UInt8], nonce: [UInt8]) -> [UInt8] {
        precondition(nonce.count == 12, "a GCM nonce is 12 bytes")
        guard let context = EVP_CIPHER_CTX_new() else { fatalError("EVP_CIPHER_CTX_new: out of memory") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written: Int32 = 0, tail: Int32 = 0
        var tag = [UInt8](repeating: 0, count: 16)
        precondition(EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1, "EVP_EncryptInit_ex failed")
        precondition(EVP_EncryptUpdate(context, &ciphertext, &written, plaintext, Int32(plaintext.count)) == 1, "EVP_EncryptUpdate failed")
        precondition(ciphertext.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(context, $0.baseAddress! + Int(written), &tail) } == 1,
                     "EVP_EncryptFinal_ex failed")
        precondition(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1, "the GCM tag could not be read")
        return nonce + ciphertext.prefix(Int(written + tail)) + tag
    }

    /// The plaintext, or nil when the value was not sealed under this key or was changed.
    public func open(_ sealed: [UInt8]) -> [UInt8]? {
        guard sealed.count >= 28 else { return nil }
        let nonce = Array(sealed.prefix(12)), tag = Array(sealed.suffix(16)), ciphertext = Array(sealed.dropFirst(12).dropLast(16))
        guard let context = EVP_CIPHER_CTX_new() else { fatalError("EVP_CIPHER_CTX_new: out of memory") }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0, tail: Int32 = 0
        var expected = tag
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1,
              EVP_DecryptUpdate(context, &plaintext, &written, ciphertext, Int32(ciphertext.count)) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &expected) == 1,
              plaintext.withUnsafeMutableBufferPointer({ EVP_DecryptFinal_ex(context, $0.baseAddress! + Int(written), &tail) }) == 1 else {
            return nil
        }
        return Array(plaintext.prefix(Int(written + tail)))
    }
}
