import Foundation
import NoughtyTours

/// `tours sync` and `tours status`.
enum SyncCommands {
    /// Forgives what failed, uploads everything queued (progress on the way), prunes old local
    /// copies, and says what stayed queued: exit 7 when the server refused something retrying
    /// cannot fix, 6 when the rest may pass; the work is kept either way.
    static func sync(_ tours: NoughtyTours, _ config: ClientConfig, _ arguments: Arguments) async throws(CLIError) {
        _ = try arguments.exactly()
        let pending = try await library { () async throws(NoughtyToursError) in try await tours.pendingUploads() }
        let display = ProgressDisplay(items: pending.items, bytes: pending.bytes)
        let events = tours.events()
        let quiet = arguments.has("--json")
        let shown = Task { for await event in events where !quiet { display.handle(event) } }
        try await library { () async throws(NoughtyToursError) in
            try await tours.sync()
            try await tours.start()
        }
        await tours.idle()
        await tours.stop()
        shown.cancel()
        _ = await shown.value
        if !arguments.has("--json") {
            if pending.items > 0 { display.finish() } else { Output.line("nothing to upload") }
        }
        if let age = config.pruneUploadedAfter {
            try await library { () async throws(NoughtyToursError) in try await tours.pruneUploadedPanoramas(olderThan: age) }
        }
        let statuses = try await PropertyCommands.allStatuses(tours)
        let left = try await library { () async throws(NoughtyToursError) in try await tours.queuedUploads() }
        if arguments.has("--json") {
            Output.json(["properties": statuses.map(Output.status), "queued": left.count])
        } else {
            statuses.forEach { Output.line(Output.summary($0)) }
        }
        let refused = left.filter { $0.state == .failed && $0.lastError?.isRetryable == false }
        guard refused.isEmpty else {
            throw .refused("\(Output.count(refused.count, "upload")) refused by the server, which retrying will not fix (kept in the queue):\n"
                           + refused.map(Output.refusal).joined(separator: "\n"))
        }
        if !left.isEmpty {
            throw .notSynced("\(Output.count(left.count, "upload")) stayed queued (kept): run tours sync again once the server can be reached")
        }
    }

    /// The property's status from local storage; `--watch` follows it (uploading meanwhile)
    /// until it is complete (exit 0), deleted (exit 4) or failed (exit 6, its work kept).
    static func status(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        let property = try await PropertyCommands.find(tours, try arguments.exactly("PROPERTY_ID")[0])
        let show = { (status: PropertyStatus) in
            if arguments.has("--json") { Output.json(Output.status(status)) } else { Output.line(Output.summary(status)) }
        }
        guard arguments.has("--watch") else {
            let status = try await library { () async throws(NoughtyToursError) in try await tours.properties.status(of: property) }
            let failures = try await library { () async throws(NoughtyToursError) in try await tours.properties.uploadFailures(of: property) }
            if arguments.has("--json") {
                var json = Output.status(status)
                json["failures"] = failures.map(Output.failure)
                Output.json(json)
            } else {
                Output.line(Output.summary(status))
                failures.forEach { Output.line(Output.summary($0)) }
            }
            return
        }
        // The status as it is first; then drain while watching, unless another process (a
        // tours sync) already does.
        var updates = tours.properties.statusUpdates(for: property).makeAsyncIterator()
        guard let first = await updates.next() else { throw .library(.notFound) }
        show(first)
        if first.isComplete { return }
        let draining = (try? await tours.start()) != nil
        let outcome = await follow(tours, property, &updates, draining: draining, show: show)
        if draining { await tours.stop() }
        try outcome.get()
    }

    /// Shows each status until the property is complete, deleted, or (while this process
    /// drains and nothing is left to try) failed.
    private static func follow(_ tours: NoughtyTours, _ property: Property, _ updates: inout AsyncStream<PropertyStatus>.Iterator,
                               draining: Bool, show: (PropertyStatus) -> Void) async -> Result<Void, CLIError> {
        while let status = await updates.next() {
            show(status)
            if status.isComplete { return .success(()) }
            if status.sync == .failed, draining {
                await tours.idle()
                if let now = try? await tours.properties.status(of: property), now.sync == .failed {
                    if let failures = try? await tours.properties.uploadFailures(of: property) {
                        failures.forEach { Output.line(Output.summary($0)) }
                    }
                    return .failure(.notSynced("\(property.id) failed to sync; its uploads stay queued: run tours sync to try again"))
                }
            }
        }
        return .failure(.library(.notFound)) // the stream ended: the property was deleted
    }
}
