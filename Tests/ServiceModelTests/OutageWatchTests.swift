import Testing
@testable import NTServiceModel

/// What the log says of a component going away and coming back: once as it goes, once every
/// interval while it stays, once as it is back; never per request or per job that met it.
@Suite struct OutageWatchTests {
    @Test func anOutageIsSaidAsItStartsEveryIntervalAndAsItEnds() {
        var watch = OutageWatch(interval: .seconds(60))
        let start = ContinuousClock.now
        let at = { (seconds: Int) in start.advanced(by: .seconds(seconds)) }
        #expect(watch.observe(nil, at: at(0)) == nil)
        #expect(watch.observe("the database is unavailable", at: at(1)) == .gone(reason: "the database is unavailable"))
        // Every second of twenty (as the timer asks): nothing more within the interval.
        for second in 2...60 { #expect(watch.observe("the database is unavailable", at: at(second)) == nil) }
        #expect(watch.observe("the database is unavailable", at: at(61)) == .stillAway(reason: "the database is unavailable", seconds: 60))
        #expect(watch.observe("the database is unavailable", at: at(62)) == nil)
        #expect(watch.observe(nil, at: at(70)) == .back(afterSeconds: 69))
        #expect(watch.observe(nil, at: at(71)) == nil)
        // A new outage is new.
        #expect(watch.observe("gone again", at: at(80)) == .gone(reason: "gone again"))
    }
}
