import Testing
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases

/// When a bucket is said to be away, and when back, without a store.
@Suite struct StoreAwayTests {
    @Test func aCallBegunBeforeTheStoreWasFoundAwaySaysNothingOfNow() {
        var away = StoreAway()
        let sweepBegan = away.findings // a slow listing starts
        let uploadBegan = away.findings
        let probing = away.found("no answer") // the upload finds the store gone
        away.reached(since: sweepBegan) // the listing's answer, which came before, is handled now
        #expect(!probing && away.reason == "no answer")
        away.reached(since: uploadBegan)
        #expect(away.reason == "no answer")
        let alreadyProbing = away.found("no answer")
        let probeBegan = away.findings
        away.reached(since: probeBegan) // a call begun since finds it back
        #expect(alreadyProbing && away.reason == nil)
    }
}
