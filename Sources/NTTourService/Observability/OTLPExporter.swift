import Foundation
import NTLogging
import NTOutboundHTTP
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTThreadPools
import NTTourUseCases
import NTTracing
import NTUploads
import NTViewerService
import NTWebhooks
import Synchronization

/// Sends the tracer's spans to an OpenTelemetry collector every `otlpExportMs`: OTLP/HTTP with
/// JSON (`POST <otlpEndpoint>`, an ExportTraceServiceRequest), through libcurl on a thread of
/// its own, so no request waits on it. A collector away loses that batch (counted and logged
/// once per outage, like the storage's): traces are for looking, not for keeping.
final class OTLPExporter: Sendable {
    private let endpoint: String
    private let host: String
    private let port: Int
    /// Where the spans wait (`otlpQueueSpans` at most).
    let tracer: Tracer
    private let thread: ThreadPool
    private let clients: PerThread<OutboundClient>
    private let timeoutMs: Int
    private let serviceName: String
    /// The collector's outages as the log tells them: when it goes, every `outageLogSeconds`
    /// while it stays away, and when it is back.
    private let failures: Mutex<OutageWatch>
    private let logger: Logger

    init?(_ settings: TraceSettings, logger: Logger) throws(StartupError) {
        guard !settings.endpoint.isEmpty else { return nil }
        guard let url = URLComponents(string: settings.endpoint), let host = url.host, !host.isEmpty,
              url.scheme == "http" || url.scheme == "https" else {
            throw StartupError("otlpEndpoint \(settings.endpoint) is not an http(s) URL (a collector's /v1/traces)")
        }
        endpoint = settings.endpoint
        self.host = host
        port = url.port ?? (url.scheme == "https" ? 443 : 80)
        tracer = Tracer(limit: settings.queueSpans)
        thread = ThreadPool(name: "otlp", threads: 1)
        clients = PerThread(threads: 1)
        timeoutMs = settings.timeoutMs
        serviceName = settings.serviceName
        failures = Mutex(OutageWatch(interval: .seconds(settings.outageLogSeconds)))
        self.logger = logger
    }

    func stop() { thread.stop() }

    /// Sends what the tracer holds (nothing when it holds nothing).
    func export() async {
        let spans = tracer.drain()
        guard !spans.isEmpty else { return }
        let body = OTLPJSON.request(spans, serviceName: serviceName)
        let (endpoint, host, port, timeoutMs) = (endpoint, host, port, timeoutMs)
        let outcome = try? await thread.run { [clients] (index: Int) -> Result<OutboundAnswer, OutboundFailure> in
            let client: OutboundClient
            do throws(OutboundFailure) {
                client = try clients.value(index) { () throws(OutboundFailure) in try OutboundClient() }
            } catch {
                return .failure(error)
            }
            return client.post(url: endpoint, host: host, port: port, headers: [("Content-Type", "application/json")], body: body,
                               timeoutMs: timeoutMs, maxResponseBytes: 64 << 10)
        }
        let problem: String? = switch outcome {
        case .success(let answer) where (200..<300).contains(answer.status): nil
        case .success(let answer): "the collector answered \(answer.status)"
        case .failure(let failure): failure.message
        case nil: "the exporter stopped"
        }
        switch failures.withLock({ $0.observe(problem, at: .now) }) {
        case nil: break
        case .gone(let reason)?, .stillAway(let reason, _)?:
            logger.warn("traces could not be sent; batches are dropped until the collector takes them", ["endpoint": endpoint, "spans": String(spans.count), "error": reason])
        case .back(let seconds)?:
            logger.info("traces are sent again", ["endpoint": endpoint, "afterSeconds": String(seconds)])
        }
    }
}

/// OTLP's JSON encoding of spans (opentelemetry-proto's ExportTraceServiceRequest): ids in
/// hex, times as decimal strings of nanoseconds since 1970.
enum OTLPJSON {
    static func request(_ spans: [FinishedSpan], serviceName: String) -> [UInt8] {
        let document: [String: Any] = [
            "resourceSpans": [[
                "resource": ["attributes": [attribute("service.name", serviceName)]],
                "scopeSpans": [["scope": ["name": "toursd"], "spans": spans.map(span)]],
            ]],
        ]
        return Array((try? JSONSerialization.data(withJSONObject: document)) ?? Data())
    }

    private static func span(_ span: FinishedSpan) -> [String: Any] {
        var out: [String: Any] = [
            "traceId": span.context.traceIdHex,
            "spanId": span.context.spanIdHex,
            "name": span.name,
            "kind": span.kind.rawValue,
            "startTimeUnixNano": String(span.startNanos),
            "endTimeUnixNano": String(span.endNanos),
            "attributes": span.attributes.map { attribute($0.key, $0.value) },
            // 1: ok, 2: error (with why).
            "status": span.error.map { ["code": 2, "message": $0] as [String: Any] } ?? ["code": 1],
        ]
        if let parent = span.parentSpanId { out["parentSpanId"] = TraceContext.hex16(parent) }
        return out
    }

    private static func attribute(_ key: String, _ value: String) -> [String: Any] {
        ["key": key, "value": ["stringValue": value]]
    }
}
