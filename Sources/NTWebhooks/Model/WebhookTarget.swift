import Foundation
import NTAPIModel
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
#if canImport(Glibc)
import Glibc
#endif

/// Where a webhook is delivered: an http(s) URL without credentials or fragment. Its host's
/// addresses are checked at each delivery (`AddressRange`), and the delivery goes to the
/// address checked (no second lookup a rebinding name could answer otherwise). Pure.
struct WebhookTarget: Equatable, Sendable {
    static let maxLength = 2048
    let url: String
    let host: String
    let port: Int

    static func parse(_ text: String) throws(InvalidDocument) -> WebhookTarget {
        guard text.utf8.count <= maxLength, let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw InvalidDocument("url must be an http or https URL of at most \(maxLength) bytes")
        }
        guard var host = components.host, !host.isEmpty else { throw InvalidDocument("url must name a host") }
        guard components.user == nil, components.password == nil, components.fragment == nil else {
            throw InvalidDocument("url must not carry credentials or a fragment")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        try checkAddressSpelling(host)
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        guard (1...65_535).contains(port) else { throw InvalidDocument("url's port must be 1 to 65535") }
        return WebhookTarget(url: text, host: host, port: port)
    }

    /// A numeric host only in its one plain spelling, so that the address checked when the
    /// endpoint is made is the one a resolver would reach: IPv6 without a zone, IPv4 as four
    /// decimal numbers. The resolver takes `2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1` and
    /// `0` for IPv4 addresses too (inet_aton's forms), so those are refused, not taken for names.
    static func checkAddressSpelling(_ host: String) throws(InvalidDocument) {
        if host.contains(":") {
            guard !host.contains("%"), AddressRange.bytes(host)?.count == 16 else {
                throw InvalidDocument("url's host is not an IPv6 address (a zone, %…, is not allowed)")
            }
            return
        }
        var v4 = in_addr()
        guard inet_aton(host, &v4) == 0 || inet_pton(AF_INET, host, &v4) == 1 else {
            throw InvalidDocument("url's host \(host) is an IPv4 address in another spelling: write it as four decimal numbers, a.b.c.d")
        }
    }
}

/// Which addresses a webhook may reach: public ones only, unless the operator allows private
/// targets (`webhookAllowPrivateTargets`). Not loopback, private (RFC 1918, unique local),
/// shared (100.64/10), link-local (the cloud metadata service's 169.254.169.254 among them),
/// unspecified, multicast or reserved, nor an IPv4 address inside IPv6 that is one. Pure.
enum AddressRange {
    /// The bytes of a numeric IPv4 or IPv6 address (4 or 16), nil for anything else.
    static func bytes(_ numeric: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, numeric, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, numeric, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    static func isPublic(_ address: [UInt8]) -> Bool {
        switch address.count {
        case 4: return isPublicV4(address)
        case 16:
            if address[0..<10].allSatisfy({ $0 == 0 }) && address[10] == 0xff && address[11] == 0xff {
                return isPublicV4(Array(address[12...])) // ::ffff:a.b.c.d
            }
            if address[0..<12].allSatisfy({ $0 == 0 }) { return false } // ::, ::1, IPv4-compatible
            let first = address[0]
            if first == 0xff { return false } // multicast
            if first & 0xfe == 0xfc { return false } // fc00::/7 unique local
            if first == 0xfe && address[1] & 0xc0 == 0x80 { return false } // fe80::/10 link-local
            if first == 0xfe && address[1] & 0xc0 == 0xc0 { return false } // fec0::/10 site-local (deprecated)
            if first == 0x20 && address[1] == 0x01 && address[2] == 0x0d && address[3] == 0xb8 { return false } // documentation
            if first == 0x00 && address[1] == 0x64 && address[2] == 0xff && address[3] == 0x9b { return false } // NAT64 of any IPv4
            return true
        default: return false
        }
    }

    private static func isPublicV4(_ a: [UInt8]) -> Bool {
        switch (a[0], a[1]) {
        case (0, _), (10, _), (127, _): return false
        case (100, 64...127): return false
        case (169, 254): return false
        case (172, 16...31): return false
        case (192, 168): return false
        case (192, 0) where a[2] == 0 || a[2] == 2: return false // IETF assignments, documentation
        case (198, 18...19): return false // benchmarking
        case (198, 51) where a[2] == 100, (203, 0) where a[2] == 113: return false // documentation
        default: return a[0] < 224 // multicast and reserved above
        }
    }
}
