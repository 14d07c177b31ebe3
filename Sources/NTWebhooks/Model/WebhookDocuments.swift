import NTAPIModel
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage

/// The body of `POST /v1/webhooks`: `{"url": "https://…", "events": ["panorama.stored", …]}`;
/// no `events` (or none) is every type.
struct WebhookInput: Equatable, Sendable {
    var target: WebhookTarget
    var events: [String]

    static func parse(_ bytes: [UInt8], maxDepth: Int) throws(InvalidDocument) -> WebhookInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        let target = try WebhookTarget.parse(try json.string("url"))
        var events: [String] = []
        if let listed = json["events"], !listed.isNull {
            for value in try json.array("events") {
                guard let type = value.string, EventType(rawValue: type) != nil else {
                    throw InvalidDocument("events lists event types: \(EventType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if !events.contains(type) { events.append(type) }
            }
        }
        return WebhookInput(target: target, events: events)
    }
}

/// A webhook endpoint as the API answers it. `secret` only in the answer that made it (kept
/// sealed, shown once); `after` is the last event delivered or passed over (the feed's cursor).
struct WebhookDocument: JSONDocument, Equatable, Sendable {
    var id: String
    var url: String
    var events: [String]
    var createdAt: String
    var after: Int64
    var attempts: Int
    var failingSince: Int64?
    var disabledAt: String?
    var secret: String?

    func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("after"); writer.string(String(after))
            writer.key("attempts"); writer.int(attempts)
            writer.key("createdAt"); writer.string(createdAt)
            writer.key("disabledAt"); writer.string(disabledAt)
            writer.key("events"); writer.array(events) { writer, type in writer.string(type) }
            writer.key("failingSince"); writer.string(failingSince.map { Timestamp.at(unixSeconds: $0) })
            writer.key("id"); writer.string(id)
            if let secret { writer.key("secret"); writer.string(secret) }
            writer.key("url"); writer.string(url)
        }
    }
}

/// `{"items": [...], "next": null}`: a whole list in the page shape of the API's lists (a
/// tenant's endpoints, an endpoint's delivery log: both bounded by the config).
struct WholeList<Item: JSONDocument & Sendable>: JSONDocument, Sendable {
    var items: [Item]

    func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("items"); writer.array(items) { writer, item in item.write(to: &writer) }
            writer.key("next"); writer.string(nil as String?)
        }
    }
}

/// One attempt of the delivery log: the event, which attempt of it, the receiver's status (or
/// why there was none), how long it took.
struct DeliveryRecord: JSONDocument, Equatable, Sendable {
    var event: Int64
    var attempt: Int
    var status: Int?
    var error: String?
    var latencyMs: Int
    var at: String

    func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("at"); writer.string(at)
            writer.key("attempt"); writer.int(attempt)
            writer.key("error"); writer.string(error)
            writer.key("eventId"); writer.string(String(event))
            writer.key("latencyMs"); writer.int(latencyMs)
            writer.key("status"); if let status { writer.int(status) } else { writer.null() }
        }
    }
}

/// The body of `POST /v1/webhooks/{id}/redeliver`: `{"after": "CURSOR"}`, the events after it
/// delivered again (a disabled endpoint enabled again).
struct RedeliverInput: Equatable, Sendable {
    var after: Int64

    static func parse(_ bytes: [UInt8], maxDepth: Int) throws(InvalidDocument) -> RedeliverInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        let text = try json.string("after")
        guard text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }), let after = Int64(text) else {
            throw InvalidDocument("after is an event id (a cursor of the feed)")
        }
        return RedeliverInput(after: after)
    }
}
