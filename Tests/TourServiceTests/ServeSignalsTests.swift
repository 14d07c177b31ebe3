#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import NTTourService

/// What toursd serve does with its signals, by where its server is (`ServeSignals`), without a
/// process: a stop or reload while starting is kept for when it listens; a stop while serving
/// stops once.
@Suite struct ServeSignalsTests {
    @Test func signalsWhileStartingAreKeptAndDoneOnceItListensReloadFirst() {
        var signals = ServeSignals()
        #expect(signals.received(SIGHUP) == nil)
        #expect(signals.received(SIGTERM) == nil)
        #expect(signals.received(SIGINT) == nil) // the first stop is the one named
        #expect(signals.phase == .starting(stop: "SIGTERM", reload: true))
        #expect(signals.started() == [.reload, .stop("SIGTERM")])
        #expect(signals.phase == .stopping)
        #expect(signals.received(SIGINT) == .alreadyStopping("SIGINT"))
        #expect(signals.started() == [])
    }

    @Test func aStartWithNothingAskedServesAndAStopComesOnce() {
        var signals = ServeSignals()
        #expect(signals.started() == [])
        #expect(signals.phase == .serving)
        #expect(signals.received(SIGHUP) == .reload)
        #expect(signals.received(SIGINT) == .stop("SIGINT"))
        #expect(signals.received(SIGTERM) == .alreadyStopping("SIGTERM"))
        #expect(signals.received(SIGHUP) == .reload) // a reload while draining still applies
        #expect(signals.phase == .stopping)
    }
}
