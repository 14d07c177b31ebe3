import NTHTTPCore
import Testing

/// What the descriptor limit leaves for connections: the daemon at a 64-descriptor limit
/// already held 39 once its service was open, so a fixed quarter left it short (EMFILE, and
/// libdispatch's monitor took the process down).
@Suite struct ConnectionCeilingTests {
    @Test func eachConnectionCountsItsSocketAndAFileAfterWhatIsKept() {
        // A daemon that counted what it holds: 39 open, 16 + 4 more kept.
        #expect(HTTPServer.connectionCeiling(limit: 64, kept: 59) == 2)
        #expect(HTTPServer.connectionCeiling(limit: 1024, kept: 59) == 482)
        // Nothing counted: a quarter of the limit, at least 32.
        #expect(HTTPServer.connectionCeiling(limit: 1024, kept: nil) == 384)
        #expect(HTTPServer.connectionCeiling(limit: 64, kept: nil) == 16)
        // Never none: a limit below what is kept still lets one client in to be answered.
        #expect(HTTPServer.connectionCeiling(limit: 32, kept: 59) == 1)
    }
}
