/// Text encodings of digests: lowercase hex (tus metadata `sha256`, ETags) and standard
/// base64 (RFC 4648 §4, as RFC 9530 byte sequences and tus checksums use).
public enum ByteEncoding {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
    private static let base64Alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Lowercase hex of the bytes.
    public static func hex(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of a hex string (either case), or nil when it is not hex of whole bytes.
    public static func bytes(fromHex text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// base64url without padding (RFC 4648 §5): safe in paths, headers and shells.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        String(base64(bytes).compactMap { char -> Character? in
            switch char {
            case "+": "-"
            case "/": "_"
            case "=": nil
            default: char
            }
        })
    }

    /// Standard base64 with padding.
    public static func base64(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(base64Alphabet[Int(b0 >> 2)])
            out.append(base64Alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? base64Alphabet[Int((b1 & 0x0f) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? base64Alphabet[Int(b2 & 0x3f)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of standard base64 text (padding required when the length needs it), or nil
    /// for anything else: a strict decoder, since its input comes from clients.
    public static func bytes(fromBase64 text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 4 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 4 * 3)
        var index = 0
        while index < utf8.count {
            let isLast = index + 4 == utf8.count
            var values = [UInt8](repeating: 0, count: 4)
            var padding = 0
            for offset in 0..<4 {
                let char = utf8[index + offset]
                if char == UInt8(ascii: "=") {
                    // Padding only at the end of the last quantum, and at most two.
                    guard isLast, offset >= 2 else { return nil }
                    padding += 1
                } else {
                    guard padding == 0, let value = base64Value(char) else { return nil }
                    values[offset] = value
                }
            }
            out.append(values[0] << 2 | values[1] >> 4)
            if padding < 2 { out.append(values[1] << 4 | values[2] >> 2) }
            if padding < 1 { out.append(values[2] << 6 | values[3]) }
            index += 4
        }
        return out
    }

    private static func hexValue(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func base64Value(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return char - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return char - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
