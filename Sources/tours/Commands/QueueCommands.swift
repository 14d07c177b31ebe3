import Foundation
import NoughtyTours

/// `tours queue list|drop` and `tours prune`: what waits to upload, and what local storage
/// keeps once it is up.
enum QueueCommands {
    static func list(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        _ = try arguments.exactly()
        let uploads = try await library { () async throws(NoughtyToursError) in try await tours.queuedUploads() }
        if arguments.has("--json") { return Output.json(["uploads": uploads.map(Output.queued)]) }
        guard !uploads.isEmpty else { return Output.line("nothing queued: everything is on the server") }
        uploads.forEach { Output.line(Output.summary($0)) }
    }

    static func drop(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        let text = try arguments.exactly("ITEM")[0]
        guard let id = Int64(text) else { throw .usage("ITEM is an upload's number, as tours queue list shows it, not \(text)") }
        let dropped: QueuedUpload
        do {
            dropped = try await tours.dropUpload(id)
        } catch .notFound {
            throw .notFound("no upload \(id) in the queue (done already, or never there): tours queue list shows them")
        } catch {
            throw .library(error)
        }
        if arguments.has("--json") { return Output.json(["dropped": Output.queued(dropped)]) }
        Output.line("dropped \(id): \(dropped.item.kind.rawValue) \(dropped.item.entityId) of property \(dropped.item.propertyId) will not be uploaded"
                    + (dropped.item.kind == .panorama ? ", and is gone from local storage" : ""))
    }

    /// `tours prune [--older-than DAYS]`: the configuration's retention unless given.
    static func prune(_ tours: NoughtyTours, _ config: ClientConfig, _ arguments: Arguments) async throws(CLIError) {
        _ = try arguments.exactly()
        let age: Duration
        if let text = arguments.value("--older-than") {
            guard let days = Double(text), days >= 0, days.isFinite else { throw .usage("--older-than takes a number of days, 0 or more") }
            age = .seconds(days * 86_400)
        } else if let kept = config.pruneUploadedAfter {
            age = kept
        } else {
            return Output.line("pruning is off (pruneUploadedAfterDays is negative in the configuration): nothing removed")
        }
        let pruned = try await library { () async throws(NoughtyToursError) in try await tours.pruneUploadedPanoramas(olderThan: age) }
        if arguments.has("--json") { return Output.json(["files": pruned.files, "bytes": pruned.bytes]) }
        Output.line("removed the local copies of \(Output.count(pruned.files, "uploaded panorama")) (\(Output.size(pruned.bytes))); they stay on the server")
    }
}
