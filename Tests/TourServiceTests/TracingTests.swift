import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// Traces (docs/api.md "Traces"): with `otlpEndpoint` set, a span per request, under the
/// caller's `traceparent`, with its database, store and image work as child spans, sent as
/// OTLP/HTTP JSON to a collector (here a receiver that decodes them); the trace goes on to
/// the webhook deliveries of the events the request made.
@Suite(.hangGuard, .testThreads) struct TracingTests {
    /// A span as the collector got it.
    struct ReceivedSpan {
        let traceId: String
        let spanId: String
        let parentSpanId: String?
        let name: String
        let attributes: [String: String]
        let failed: Bool
    }

    static func spans(_ collector: HookReceiver) -> [ReceivedSpan] {
        collector.received.flatMap { request -> [ReceivedSpan] in
            guard let document = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any] else { return [] }
            let resources = document["resourceSpans"] as? [[String: Any]] ?? []
            return resources.flatMap { resource in
                (resource["scopeSpans"] as? [[String: Any]] ?? []).flatMap { scope in
                    (scope["spans"] as? [[String: Any]] ?? []).map { span in
                        let attributes = (span["attributes"] as? [[String: Any]] ?? []).reduce(into: [String: String]()) { all, attribute in
                            all[attribute["key"] as? String ?? ""] = (attribute["value"] as? [String: Any])?["stringValue"] as? String
                        }
                        return ReceivedSpan(traceId: span["traceId"] as? String ?? "", spanId: span["spanId"] as? String ?? "",
                                            parentSpanId: span["parentSpanId"] as? String, name: span["name"] as? String ?? "",
                                            attributes: attributes, failed: (span["status"] as? [String: Any])?["code"] as? Int == 2)
                    }
                }
            }
        }
    }

    @Test func anUploadsTraceHasItsDatabaseStoreAndImageSpansAndGoesOnToItsWebhooks() async throws {
        let collector = try HookReceiver()
        let hooks = try HookReceiver()
        let harness = try await ServiceHarness {
            $0.otlpEndpoint = collector.url("v1/traces")
            $0.otlpExportMs = 100
            $0.webhookAllowPrivateTargets = true
            $0.webhookPollMs = 50
        }
        let client = try harness.client(harness.alpha)
        #expect(try client.send("POST", "/v1/webhooks", json: ["url": hooks.url(), "events": ["property.updated"]]).status == 201)
        let (propertyId, floorId) = try client.makeFloor()
        // The caller's trace: its span the parent of the request's.
        let (trace, callerSpan) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
        let id = newID()
        let upload = try client.send("PUT", "/v1/panoramas/\(id)?floorId=\(floorId)", body: try JPEGFixture.panorama(width: 1024),
                                     headers: ["Content-Type": "image/jpeg", "traceparent": "00-\(trace)-\(callerSpan)-01"])
        #expect(upload.status == 201)
        try await waitUntil("the upload's spans at the collector", seconds: 20) {
            Self.spans(collector).contains { $0.traceId == trace && $0.name == "PUT /v1/panoramas/{panoramaId}" }
        }
        let spans = Self.spans(collector)
        let server = try #require(spans.first { $0.traceId == trace && $0.name == "PUT /v1/panoramas/{panoramaId}" })
        #expect(server.parentSpanId == callerSpan && server.attributes["http.response.status_code"] == "201" && !server.failed)
        let children = Set(spans.filter { $0.traceId == trace && $0.parentSpanId == server.spanId }.map(\.name))
        #expect(children.isSuperset(of: ["database write", "store receive", "store place"]), "\(children)")

        // Its processing, after the upload's answer, is a span of the upload's trace with the
        // previews it made.
        try await waitUntil("the processing's spans", seconds: 20) {
            Self.spans(collector).contains { $0.traceId == trace && $0.name == "panorama processing" }
        }
        let processed = Self.spans(collector)
        let processing = try #require(processed.first { $0.traceId == trace && $0.name == "panorama processing" })
        #expect(processing.parentSpanId == server.spanId && !processing.failed)
        // One decode for every width.
        let images = processed.filter { $0.name == "image preview" && $0.parentSpanId == processing.spanId }
        #expect(images.map { $0.attributes["widths"] } == [harness.config.previewWidths.map(String.init).joined(separator: ",")], "\(images)")

        // No traceparent, or one that is not: a trace of its own.
        let preview = try client.send("GET", "/v1/panoramas/\(id)/preview?width=320", headers: ["traceparent": "00-zz-not-a-trace"])
        #expect(preview.status == 200)
        let previewRoute = "GET /v1/panoramas/{panoramaId}/preview"
        try await waitUntil("the preview's span", seconds: 20) { Self.spans(collector).contains { $0.name == previewRoute } }
        let previewSpan = try #require(Self.spans(collector).first { $0.name == previewRoute })
        #expect(previewSpan.parentSpanId == nil && previewSpan.traceId != trace)

        // A change's event carries its request's trace on to the receiver, and the delivery is
        // a span of it.
        let changeTrace = "0af7651916cd43dd8448eb211c80319c"
        #expect(try client.send("PUT", "/v1/properties/\(propertyId)", json: ["name": "Traced", "floorCount": 1],
                                headers: ["traceparent": "00-\(changeTrace)-b7ad6b7169203331-01"]).status == 200)
        try await waitUntil("the delivery", seconds: 20) { !hooks.received.isEmpty }
        let carried = try #require(hooks.received.first?.headers["traceparent"])
        #expect(carried.hasPrefix("00-\(changeTrace)-") && carried.hasSuffix("-01") && !carried.contains("b7ad6b7169203331"))
        try await waitUntil("the delivery's span", seconds: 20) {
            Self.spans(collector).contains { $0.traceId == changeTrace && $0.name == "webhook delivery" && carried.contains($0.spanId) }
        }

        // A caller's trace marked not to be recorded is not.
        let quiet = "11111111111111111111111111111111"
        #expect(try client.send("GET", "/v1/properties/\(propertyId)", headers: ["traceparent": "00-\(quiet)-2222222222222222-00"]).status == 200)
        #expect(try client.send("GET", "/v1/properties/\(propertyId)", headers: ["traceparent": "00-\(changeTrace)-3333333333333333-01"]).status == 200)
        try await waitUntil("the last request's span", seconds: 20) {
            Self.spans(collector).contains { $0.traceId == changeTrace && $0.parentSpanId == "3333333333333333" }
        }
        #expect(!Self.spans(collector).contains { $0.traceId == quiet })

        // A path that is a credential (an upload's URL) is named by its route, never sent.
        let location = try #require(try client.tusCreate(panoramaId: newID(), floorId: floorId, length: 100).header("Location"))
        #expect(try client.tus("HEAD", location).status == 200)
        let pattern = "/v1/uploads/{uploadId}/{capability}"
        try await waitUntil("the upload URL's span", seconds: 20) { Self.spans(collector).contains { $0.name == "HEAD \(pattern)" } }
        let head = try #require(Self.spans(collector).first { $0.name == "HEAD \(pattern)" })
        #expect(head.attributes["url.path"] == pattern && !head.attributes.values.contains { $0.contains(location) })
        await harness.finish()
        collector.stop()
        hooks.stop()
    }

    /// A collector away costs requests nothing: they are answered, its batches dropped and
    /// the failure logged once per outageLogSeconds.
    @Test func aCollectorAwayLosesItsBatchesNotTheRequests() async throws {
        let away = try PortReservation()
        let log = testDirectory("otlp-away").path + ".log"
        // One daemon even in a balanced run: the log line is each daemon's.
        let harness = try await ServiceHarness(logFile: log, logLevel: .warn, alone: true) {
            $0.otlpEndpoint = "http://127.0.0.1:\(away.port)/v1/traces"
            $0.otlpExportMs = 50
            $0.otlpTimeoutMs = 500
        }
        let client = try harness.client(harness.alpha)
        for _ in 0..<20 { #expect(try client.putProperty(newID()).status == 201) }
        try await waitUntil("the failed sending in the log", seconds: 20) {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("traces could not be sent")
        }
        for _ in 0..<20 { #expect(try client.putProperty(newID()).status == 201) }
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("traces could not be sent") }
        #expect(lines.count == 1, "\(lines)")
        await harness.finish()
        away.release()
    }
}
