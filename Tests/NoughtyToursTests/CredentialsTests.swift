import Synchronization
import Testing
@testable import NoughtyTours

/// docs/client.md "Grants": requests that find the same grant expired together share one
/// renewal; a provider's failure is retryable; no provider, no renewal.
@Suite struct CredentialsTests {
    @Test func requestsThatFindOneGrantExpiredAskTheProviderOnce() async throws {
        let calls = Atomic(0)
        let credentials = Credentials(token: "ntg_old") {
            calls.add(1, ordering: .relaxed)
            return "ntg_new"
        }
        let tokens = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<20 { group.addTask { try? await credentials.renewed(replacing: "ntg_old")?.get() } }
            return await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(tokens.count == 20 && tokens.allSatisfy { $0 == "ntg_new" })
        #expect(calls.load(ordering: .relaxed) == 1 && credentials.token == "ntg_new")
        // The new one expiring in turn asks again.
        #expect(try await credentials.renewed(replacing: "ntg_new")?.get() == "ntg_new" && calls.load(ordering: .relaxed) == 2)
    }

    @Test func aProviderThatFailsOrGivesNoTokenIsARetryableFailure() async {
        let failing = Credentials(token: "ntg_old") { throw NoughtyToursError.transport("the host's backend is down") }
        let failed = await failing.renewed(replacing: "ntg_old")
        guard case .failure(let error)? = failed else { Issue.record("not a failure: \(String(describing: failed))"); return }
        #expect(error.isRetryable && failing.token == "ntg_old")
        let broken = Credentials(token: "ntg_old") { "two words" }
        guard case .failure? = await broken.renewed(replacing: "ntg_old") else { Issue.record("a token with a space was taken"); return }
        #expect(broken.token == "ntg_old")
        #expect(await Credentials(token: "ntg_old", provider: nil).renewed(replacing: "ntg_old") == nil)
    }
}
