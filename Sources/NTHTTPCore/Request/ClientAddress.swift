#if canImport(Glibc)
import Glibc
#endif

/// The address a request came from, as a limit per client should see it. Directly, the
/// connection's peer. Behind proxies the operator named (`trusted`), the last address in
/// `X-Forwarded-For` that is not itself one of them: each proxy appends the address it
/// received from, so entries left of an untrusted hop are the client's own claims and count
/// for nothing. From any other peer the header is ignored (anyone can send it).
public enum ClientAddress {
    public static func of(peer: [UInt8], forwardedFor: String?, trusted: Set<[UInt8]>) -> [UInt8] {
        guard trusted.contains(peer), let forwardedFor else { return peer }
        var address = peer
        for entry in forwardedFor.split(separator: ",").reversed() {
            let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
            guard let hop = parse(String(entry.drop(while: blank).reversed().drop(while: blank).reversed())) else {
                break // not an address: the last good hop stands
            }
            address = hop
            if !trusted.contains(hop) { break }
        }
        return address
    }

    /// An IPv4 or IPv6 address in text as the bytes `Request.peerAddress` holds (an IPv4
    /// address mapped into IPv6 as its 4 bytes); nil for anything else.
    public static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        return unmapped(withUnsafeBytes(of: &v6) { Array($0) })
    }

    /// An IPv6 address's 16 bytes; an IPv4 address mapped into IPv6 (::ffff:a.b.c.d) as its 4.
    static func unmapped(_ bytes: [UInt8]) -> [UInt8] {
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
        return mapped ? Array(bytes[12...]) : bytes
    }
}
