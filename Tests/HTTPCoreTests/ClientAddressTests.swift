import Testing
@testable import NTHTTPCore

/// The client's address for limits per client: the peer, or behind trusted proxies the last
/// hop of `X-Forwarded-For` that is not one of them.
@Suite struct ClientAddressTests {
    let proxy: [UInt8] = [10, 0, 0, 2]
    let balancer: [UInt8] = [10, 0, 0, 3]
    let client: [UInt8] = [203, 0, 113, 7]

    @Test func addressesParseAsThePeerAddressHoldsThem() {
        #expect(ClientAddress.parse("203.0.113.7") == client)
        #expect(ClientAddress.parse("::ffff:203.0.113.7") == client) // mapped: its 4 bytes
        #expect(ClientAddress.parse("2001:db8::1") == [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1])
        for text in ["", "203.0.113", "203.0.113.7.1", "example.com", "256.0.0.1", "unknown", " 203.0.113.7"] {
            #expect(ClientAddress.parse(text) == nil, "\(text)")
        }
    }

    @Test func theHeaderCountsOnlyFromATrustedPeer() {
        #expect(ClientAddress.of(peer: client, forwardedFor: nil, trusted: [proxy]) == client)
        #expect(ClientAddress.of(peer: client, forwardedFor: "198.51.100.2", trusted: [proxy]) == client) // anyone can send it
        #expect(ClientAddress.of(peer: proxy, forwardedFor: nil, trusted: [proxy]) == proxy)
        #expect(ClientAddress.of(peer: proxy, forwardedFor: "203.0.113.7", trusted: [proxy]) == client)
        #expect(ClientAddress.of(peer: proxy, forwardedFor: "203.0.113.7", trusted: []) == proxy)
    }

    @Test func theLastHopThatIsNotAProxyIsTheClient() {
        // What the client claims left of the hop the proxy appended counts for nothing.
        #expect(ClientAddress.of(peer: proxy, forwardedFor: "198.51.100.2, 203.0.113.7", trusted: [proxy]) == client)
        // Through two trusted proxies, the client is the first untrusted hop from the right.
        #expect(ClientAddress.of(peer: proxy, forwardedFor: "203.0.113.7,10.0.0.3", trusted: [proxy, balancer]) == client)
        // A hop that is not an address ends the walk at the last good one.
        #expect(ClientAddress.of(peer: proxy, forwardedFor: "203.0.113.7, junk", trusted: [proxy]) == proxy)
        #expect(ClientAddress.of(peer: proxy, forwardedFor: "junk, 203.0.113.7", trusted: [proxy]) == client)
        #expect(ClientAddress.of(peer: proxy, forwardedFor: " 203.0.113.7 \t", trusted: [proxy]) == client)
        // Every hop a trusted proxy: the first of them.
        #expect(ClientAddress.of(peer: proxy, forwardedFor: "10.0.0.3", trusted: [proxy, balancer]) == balancer)
    }
}
