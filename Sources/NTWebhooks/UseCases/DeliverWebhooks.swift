import Foundation
import NTAPIModel
import NTHashing
import NTLogging
import NTMetrics
import NTOutboundHTTP
import NTServiceModel
import NTServiceStorage
import NTThreadPools
import NTTracing
import Synchronization

/// Delivers each endpoint's events (docs/webhooks.md): every `webhookPollMs` it takes the
/// endpoints with events after their cursor that are due and that no daemon delivers now
/// (a lease in the endpoint's row, so one daemon at a time, across daemons too), and sends
/// their events one at a time, in order, signed, from a thread pool of its own: the request
/// blocks one of those threads, never a loop or handler thread. An attempt and the endpoint's
/// state after it are recorded in one transaction; one acknowledged by its receiver but not
/// yet recorded (the daemon died) is sent again, with the same webhook-id.
package final class WebhookDeliverer: Sendable {
    private let records: Records
    private let clock: any ServiceClock
    private let logger: Logger
    private let outages: OutageLog
    private let settings: WebhookSettings
    private let key: SecretBox
    private let threads: ThreadPool
    /// Where delivery spans go when traces are sent (nil: not).
    private let tracer: Tracer?
    /// Each thread's libcurl handle: a receiver's connection outlives the delivery that made it.
    private let clients: PerThread<OutboundClient>
    /// The endpoints this daemon delivers now ("tenant/id"): at most `webhookConcurrency`.
    private let delivering = Mutex<Set<String>>([])
    /// Events one lease sends at most before the endpoint waits its turn again.
    private static let eventsPerLease = 50
    /// Attempts by outcome (delivered, failed: to be tried again, disabled) and latency.
    private let attempts = OperationMetrics(name: "toursd_webhook_deliveries", what: "webhook delivery attempts")
    /// The outbox's backlog as last read (`refreshBacklog`); nil before the first reading.
    private let backlog = Mutex<(behind: Int, failing: Int)?>(nil)

    /// `threads`: the deliveries' (`webhookConcurrency` of them: a delivery blocks in libcurl).
    package init(records: Records, clock: any ServiceClock, logger: Logger, outages: OutageLog, settings: WebhookSettings, key: SecretBox, threads: ThreadPool,
         tracer: Tracer?) {
        (self.records, self.clock, self.logger, self.outages, self.settings) = (records, clock, logger, outages, settings)
        self.tracer = tracer
        self.key = key
        self.threads = threads
        clients = PerThread(threads: threads.threadCount)
    }

    package func stop() { threads.stop() }

    /// Reads the outbox's backlog for /metrics (every `metricsRefreshSeconds`).
    package func refreshBacklog() async {
        guard let read = try? await records.readOne({ try await WebhookStore.backlog($0) }) else { return }
        backlog.withLock { $0 = read }
    }

    /// Its lines of /metrics.
    package var metrics: String {
        var lines = attempts.render()
        if let backlog = backlog.withLock({ $0 }) {
            lines += """
                # HELP toursd_webhook_endpoints_behind Enabled webhook endpoints with events not delivered yet (every daemon's), as last read.
                # TYPE toursd_webhook_endpoints_behind gauge
                toursd_webhook_endpoints_behind \(backlog.behind)
                # HELP toursd_webhook_endpoints_failing Of those, the endpoints waiting to be tried again after a failure.
                # TYPE toursd_webhook_endpoints_failing gauge
                toursd_webhook_endpoints_failing \(backlog.failing)

                """
        }
        return lines
    }

    /// Starts delivering the endpoints that are due, as many as there are free slots.
    package func deliverDue() async {
        let free = settings.concurrency - delivering.withLock { $0.count }
        guard free > 0 else { return }
        let now = clock.unixMilliseconds
        do {
            for (tenant, id) in try await records.readOne({ try await WebhookStore.due($0, nowMs: now, limit: free) }) {
                guard delivering.withLock({ $0.insert("\(tenant)/\(id)").inserted }) else { continue }
                // On the deliverer's own threads, never Swift's shared cooperative ones (which
                // blocking callers in a host process may hold).
                Task(executorPreference: threads) { [self] in
                    await deliver(tenant, id)
                    _ = delivering.withLock { $0.remove("\(tenant)/\(id)") }
                }
            }
        } catch {
            outages.failed("looking for webhook deliveries failed", error)
        }
    }

    /// Takes the endpoint, sends its events, and lets it go.
    private func deliver(_ tenant: Int64, _ id: String) async {
        let now = clock.unixMilliseconds
        let lease = now + Int64(settings.timeoutMs) * 2 + 10_000
        do {
            guard let endpoint = try await records.write({ try await WebhookStore.claim($0, tenant, id, nowMs: now, lease: lease) }) else { return }
            try await deliver(endpoint, tenant, id, lease: lease)
            try await records.write { try await WebhookStore.release($0, tenant, id, lease: lease) }
        } catch {
            logger.warn("a webhook delivery could not be recorded", ["webhook": id, "error": "\(error)"])
        }
    }

    /// Sends the endpoint's events until one fails, none is left, or the lease could not cover
    /// another attempt.
    private func deliver(_ claimed: WebhookStore.Endpoint, _ tenant: Int64, _ id: String, lease: Int64) async throws {
        let settings = self.settings
        var endpoint = claimed
        var sent = 0
        // The events after the cursor not gone through yet: a page is read once, not per event.
        var page: ArraySlice<EventRecord> = []
        while sent < Self.eventsPerLease, clock.unixMilliseconds + Int64(settings.timeoutMs) + 5000 < lease {
            if page.isEmpty {
                let after = endpoint.after
                page = try await records.readOne { try await EventStore.page($0, tenant, after: after, limit: Self.eventsPerLease) }[...]
                guard !page.isEmpty else { return }
            }
            // Each move of the cursor is from where this delivery has it: a redelivery that moved
            // it meanwhile wins, and this delivery stops (the next turn starts from there).
            let cursor = endpoint.after
            guard let wanted = page.firstIndex(where: { endpoint.events.isEmpty || endpoint.events.contains($0.type) }) else {
                let last = page[page.endIndex - 1].id
                guard try await records.write({ try await WebhookStore.pass($0, tenant, id, lease: lease, from: cursor, to: last) }) else { return }
                (endpoint.after, page) = (last, [])
                continue
            }
            let event = page[wanted]
            if wanted > page.startIndex {
                let passed = page[wanted - 1].id
                guard try await records.write({ try await WebhookStore.pass($0, tenant, id, lease: lease, from: cursor, to: passed) }) else { return }
                endpoint.after = passed
            }
            page = page[(wanted + 1)...]
            let attempt = await send(event, of: endpoint, webhook: id)
            let next = WebhookRetry.next(delivered: attempt.status.map { (200..<300).contains($0) } ?? false, attempts: endpoint.attempts,
                                         failingSince: endpoint.failingSince, nowMs: clock.unixMilliseconds,
                                         policy: .init(retryHours: settings.retryHours, baseMs: settings.backoffBaseMs,
                                                       maxMs: settings.backoffMaxMs),
                                         jitter: Double.random(in: 0..<1))
            let from = endpoint.after
            guard try await records.write({
                try await WebhookStore.record($0, tenant, id, lease: lease, from: from, attempt: attempt, next: next, keep: settings.deliveryLog, at: self.clock.now())
            }) else { return }
            let outcome = switch next {
            case .delivered: "delivered"
            case .retry: "failed"
            case .disabled: "disabled"
            }
            attempts.record("attempt", outcome: outcome, seconds: Double(attempt.latencyMs) / 1000)
            guard next == .delivered else {
                if case .disabled = next { logger.warn("a webhook endpoint failed for too long and was disabled", ["webhook": id]) }
                return
            }
            (endpoint.after, endpoint.attempts, endpoint.failingSince) = (event.id, 0, nil)
            sent += 1
        }
    }

    /// One attempt of `event` to the endpoint: its status, or why there was none.
    private func send(_ event: EventRecord, of endpoint: WebhookStore.Endpoint, webhook: String) async -> WebhookStore.Attempt {
        let settings = self.settings
        var attempt = WebhookStore.Attempt(event: event.id, number: endpoint.attempts + 1, status: nil, error: nil, latencyMs: 0)
        guard let secret = key.open(endpoint.sealedSecret) else {
            attempt.error = "the endpoint's secret cannot be opened with this daemon's webhook key (webhookKeyFile)"
            return attempt
        }
        guard let target = try? WebhookTarget.parse(endpoint.url) else {
            attempt.error = "the endpoint's url is not a webhook target"
            return attempt
        }
        var writer = JSONWriter()
        event.write(to: &writer)
        let body = writer.bytes
        let trace = DeliveryTrace(event, tracer: tracer)
        let headers = StandardWebhooks.headers(key: secret, id: StandardWebhooks.messageId(webhook: webhook, event: event.id),
                                               timestamp: clock.unixSeconds, body: body)
            + (trace.map { [(name: "traceparent", value: $0.span.traceparent)] } ?? [])
        let outcome: Result<OutboundAnswer, OutboundFailure>
        do {
            outcome = try await threads.run { [clients] (thread: Int) -> Result<OutboundAnswer, OutboundFailure> in
                let client: OutboundClient
                do throws(OutboundFailure) {
                    client = try clients.value(thread) { () throws(OutboundFailure) in try OutboundClient() }
                } catch {
                    return .failure(error)
                }
                return client.post(url: target.url, host: target.host, port: target.port, headers: headers, body: body,
                                   timeoutMs: settings.timeoutMs, maxResponseBytes: settings.responseBytes) { addresses in
                    // Every address must be one it may reach: a name answering a public and a
                    // private address is refused, not tried on the public one alone.
                    settings.allowPrivateTargets || addresses.allSatisfy({ AddressRange.bytes($0).map(AddressRange.isPublic) ?? false }) ? nil
                        : "\(target.host) resolves to a loopback, private or link-local address (webhookAllowPrivateTargets is off)"
                }
            }
        } catch {
            outcome = .failure(OutboundFailure(message: "the daemon is stopping", latencyMs: 0))
        }
        switch outcome {
        case .success(let answer): (attempt.status, attempt.latencyMs) = (answer.status, answer.latencyMs)
        case .failure(let failure): (attempt.error, attempt.latencyMs) = (failure.message, failure.latencyMs)
        }
        trace?.record(attempt, webhook: webhook)
        return attempt
    }
}

/// A delivery in the trace of the request that made its event: it sends `span` on as the
/// receiver's `traceparent`, and its attempt is that span.
private struct DeliveryTrace {
    let tracer: Tracer
    let parent: TraceContext
    let span: TraceContext
    let start = Tracer.now()

    /// Nil when traces are not sent or the event's request was not traced.
    init?(_ event: EventRecord, tracer: Tracer?) {
        guard let tracer, let parent = event.traceparent.flatMap(TraceContext.init(traceparent:)) else { return nil }
        (self.tracer, self.parent, span) = (tracer, parent, parent.child())
    }

    func record(_ attempt: WebhookStore.Attempt, webhook: String) {
        guard parent.sampled else { return }
        let failure = attempt.error ?? attempt.status.flatMap { (200..<300).contains($0) ? nil : "HTTP \($0)" }
        tracer.record(FinishedSpan(name: "webhook delivery", context: span, parentSpanId: parent.spanId, kind: .client, startNanos: start,
                                   endNanos: Tracer.now(), attributes: [("webhook", webhook), ("event", String(attempt.event)),
                                                                        ("http.response.status_code", attempt.status.map(String.init) ?? "")],
                                   error: failure))
    }
}
