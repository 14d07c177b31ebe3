import Testing
import NTHashing
import NTAPIModel
@testable import NTServiceModel
@testable import NTWebhooks

/// The webhook pieces that decide without I/O: signatures, targets, addresses, retries.
@Suite struct WebhookRulesTests {
    /// The Standard Webhooks specification's own example: its libraries verify with it.
    @Test func theSignatureIsTheSpecificationsExample() throws {
        let key = try #require(StandardWebhooks.key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let signature = StandardWebhooks.signature(key: key, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330,
                                                   body: Array(#"{"test": 2432232314}"#.utf8))
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(StandardWebhooks.secret(key) == "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        #expect(StandardWebhooks.key("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") == nil)
    }

    @Test func aMessageIdIsOneEventToOneEndpoint() {
        let id = StandardWebhooks.messageId(webhook: "0b6e1c7a-1d1e-4c6f-9d7e-2f4a5b6c7d8e", event: 42)
        #expect(id == "msg_0b6e1c7a1d1e4c6f9d7e2f4a5b6c7d8e_42")
        #expect(id != StandardWebhooks.messageId(webhook: "0b6e1c7a-1d1e-4c6f-9d7e-2f4a5b6c7d8e", event: 43))
    }

    @Test(arguments: [
        ("https://hooks.example.com/toursd", "hooks.example.com", 443),
        ("http://hooks.example.com:8080/x?y=1", "hooks.example.com", 8080),
        ("http://[2001:db8::1]:9000/", "2001:db8::1", 9000),
    ])
    func targetsAreHttpURLs(url: String, host: String, port: Int) throws {
        let target = try WebhookTarget.parse(url)
        #expect(target.host == host && target.port == port && target.url == url)
    }

    @Test(arguments: ["ftp://example.com/", "https://user:secret@example.com/", "https://example.com/#part", "example.com/hook", "https:///nohost",
                      "https://example.com/" + String(repeating: "a", count: 2100)])
    func otherTargetsAreRefused(url: String) {
        #expect(throws: InvalidDocument.self) { try WebhookTarget.parse(url) }
    }

    @Test(arguments: [
        ("127.0.0.1", false), ("10.1.2.3", false), ("172.16.0.1", false), ("172.31.255.255", false), ("192.168.1.1", false),
        ("169.254.169.254", false), ("100.64.0.1", false), ("0.0.0.0", false), ("224.0.0.1", false), ("255.255.255.255", false),
        ("::1", false), ("::", false), ("fe80::1", false), ("fd00::1", false), ("::ffff:127.0.0.1", false), ("::ffff:10.0.0.1", false),
        ("ff02::1", false), ("64:ff9b::a00:1", false),
        ("93.184.216.34", true), ("172.32.0.1", true), ("8.8.8.8", true), ("2606:4700::1111", true), ("::ffff:8.8.8.8", true),
    ])
    func onlyPublicAddressesArePublic(address: String, isPublic: Bool) throws {
        #expect(AddressRange.isPublic(try #require(AddressRange.bytes(address))) == isPublic)
    }

    @Test func retriesBackOffWithJitterAndStopAfterTheWindow() {
        let policy = WebhookRetry.Policy(retryHours: 1, baseMs: 1000, maxMs: 8000)
        // The base doubled per failure, at most the maximum; jitter takes up to half off.
        #expect(WebhookRetry.delayMs(failed: 1, policy: policy, jitter: 0) == 1000)
        #expect(WebhookRetry.delayMs(failed: 3, policy: policy, jitter: 0) == 4000)
        #expect(WebhookRetry.delayMs(failed: 9, policy: policy, jitter: 0) == 8000)
        #expect(WebhookRetry.delayMs(failed: 9, policy: policy, jitter: 1) == 4000)
        #expect(WebhookRetry.delayMs(failed: 500, policy: policy, jitter: 0.5) == 6000)
        let now: Int64 = 1_000_000_000_000
        #expect(WebhookRetry.next(delivered: true, attempts: 7, failingSince: 1, nowMs: now, policy: policy, jitter: 0) == .delivered)
        #expect(WebhookRetry.next(delivered: false, attempts: 0, failingSince: nil, nowMs: now, policy: policy, jitter: 0)
                == .retry(attempts: 1, failingSince: now / 1000, at: now + 1000))
        let since = now / 1000 - 3599
        #expect(WebhookRetry.next(delivered: false, attempts: 4, failingSince: since, nowMs: now, policy: policy, jitter: 0)
                == .retry(attempts: 5, failingSince: since, at: now + 8000))
        #expect(WebhookRetry.next(delivered: false, attempts: 5, failingSince: since - 1, nowMs: now, policy: policy, jitter: 0)
                == .disabled(attempts: 6, failingSince: since - 1))
    }

    @Test func webhookInputsAreCheckedAndSayWhy() throws {
        let input = try WebhookInput.parse(Array(#"{"url": "https://example.com/h", "events": ["panorama.stored", "panorama.stored", "tour.changed"]}"#.utf8), maxDepth: 16)
        #expect(input.events == ["panorama.stored", "tour.changed"])
        #expect(try WebhookInput.parse(Array(#"{"url": "https://example.com/h"}"#.utf8), maxDepth: 16).events.isEmpty)
        #expect(throws: InvalidDocument.self) { try WebhookInput.parse(Array(#"{"url": "https://example.com/h", "events": ["nope"]}"#.utf8), maxDepth: 16) }
        #expect(throws: InvalidDocument.self) { try WebhookInput.parse(Array(#"{"events": []}"#.utf8), maxDepth: 16) }
    }
}
