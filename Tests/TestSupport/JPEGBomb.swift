/// A progressive JPEG built byte by byte, the shape of the probe's image bomb: three
/// components at full resolution, one DC scan of one bit per block, then `acScans` AC scans
/// that cover every block with end-of-band runs of up to 32,767 blocks. A 23168 × 11584 one is
/// about 1.6 MB of file and asks a decoder for a 1.6 GB coefficient buffer, each AC scan a
/// pass over a third of it. Valid JPEG: libjpeg-turbo decodes it (to flat grey).
public enum JPEGBomb {
    public static func make(width: Int, height: Int, acScans: Int) -> [UInt8] {
        var out: [UInt8] = [0xFF, 0xD8]
        // One quantization table of ones.
        out += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
        // SOF2: 8-bit, height, width, three components 1×1 on table 0.
        out += [0xFF, 0xC2, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 0x03]
        out += [0x01, 0x11, 0x00, 0x02, 0x11, 0x00, 0x03, 0x11, 0x00]
        // DC table 0: category 0 alone, code "0". AC table 0: the end-of-band runs EOB0…EOB14,
        // 4-bit codes 0000…1110 (EOBr is code r).
        let dc: [UInt8] = [0x00] + [1] + [UInt8](repeating: 0, count: 15) + [0x00]
        let ac: [UInt8] = [0x10] + [0, 0, 0, 15] + [UInt8](repeating: 0, count: 12) + (0..<15).map { UInt8($0 << 4) }
        let tables = dc + ac
        out += [0xFF, 0xC4, 0x00, UInt8(2 + tables.count)] + tables
        let blocks = ((width + 7) / 8) * ((height + 7) / 8)
        // The DC scan of all three components: a zero difference per block, one bit each.
        out += [0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00]
        var dcBits = BitWriter()
        dcBits.bytes = [UInt8](repeating: 0, count: 3 * blocks / 8)
        dcBits.write(0, count: 3 * blocks % 8)
        out += dcBits.finished()
        // Each AC scan: one component, coefficients 1…63, every block an end of band.
        for scan in 0..<acScans {
            out += [0xFF, 0xDA, 0x00, 0x08, 0x01, UInt8(1 + scan % 3), 0x00, 0x01, 0x3F, 0x00]
            var bits = BitWriter()
            var remaining = blocks
            while remaining > 0 {
                let run = min(remaining, 32_767)
                let r = Int.bitWidth - 1 - run.leadingZeroBitCount // 2^r <= run < 2^(r+1)
                bits.write(UInt32(r), count: 4)
                bits.write(UInt32(run - (1 << r)), count: r)
                remaining -= run
            }
            out += bits.finished()
        }
        return out + [0xFF, 0xD9]
    }

    /// Entropy-coded bits, most significant first, with 0xFF bytes stuffed (FF 00) and the
    /// last byte padded with ones.
    struct BitWriter {
        var bytes: [UInt8] = []
        var current: UInt32 = 0
        var used = 0

        mutating func write(_ value: UInt32, count: Int) {
            for index in stride(from: count - 1, through: 0, by: -1) {
                current = current << 1 | (value >> UInt32(index) & 1)
                used += 1
                if used == 8 { flush() }
            }
        }

        private mutating func flush() {
            bytes.append(UInt8(current))
            if current == 0xFF { bytes.append(0x00) }
            current = 0
            used = 0
        }

        mutating func finished() -> [UInt8] {
            while used != 0 { write(1, count: 1) }
            return bytes
        }
    }
}
