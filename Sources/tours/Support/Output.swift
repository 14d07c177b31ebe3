#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NoughtyTours

/// What commands print: plain text for people, `--json` (one object per line) for scripts.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("tours: " + text + "\n").utf8))
    }

    static func json(_ value: Any) {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    static func property(_ property: Property) -> [String: Any] {
        ["id": property.id, "name": property.name]
    }

    static func status(_ status: PropertyStatus) -> [String: Any] {
        ["property": property(status.property), "tourId": status.tourId.map(Output.id) ?? NSNull(), "sync": status.sync.rawValue,
         "floorCount": status.floorCount, "roomCount": status.roomCount, "panoramaCount": status.panoramaCount,
         "panoramasUploaded": status.panoramasUploaded, "panoramasFailed": status.panoramasFailed, "isComplete": status.isComplete]
    }

    static func summary(_ status: PropertyStatus) -> String {
        "\(status.property.id)  \(status.property.name)  \(status.sync.rawValue)  panoramas \(status.panoramasUploaded)/\(status.panoramaCount)"
            + (status.panoramasFailed > 0 ? " (\(status.panoramasFailed) failing)" : "") + (status.tourId.map { "  tour \(Output.id($0))" } ?? "")
    }

    static func remoteProperty(_ property: RemoteProperty) -> [String: Any] {
        ["id": property.id, "name": property.name, "tourId": id(property.tourId), "floorCount": property.floorCount,
         "updatedAt": ISO8601DateFormatter().string(from: property.updatedAt)]
    }

    static func summary(_ property: RemoteProperty) -> String {
        "\(property.id)  \(property.name)  floors \(property.floorCount)  updated \(ISO8601DateFormatter().string(from: property.updatedAt))"
    }

    static func failure(_ failure: UploadFailure) -> [String: Any] {
        ["kind": failure.item.kind.rawValue, "id": failure.item.entityId, "attempts": failure.attempts,
         "lastError": failure.lastError.description, "willRetry": failure.willRetry,
         "failedAt": ISO8601DateFormatter().string(from: failure.failedAt)]
    }

    /// One failed item: what it is, why it failed, and what happens next.
    static func summary(_ failure: UploadFailure) -> String {
        "  \(failure.item.kind.rawValue) \(failure.item.entityId): \(failure.lastError.description) (after \(count(failure.attempts, "attempt")); "
            + (failure.willRetry ? "will retry)" : failure.lastError.isRetryable ? "will not retry: run tours sync)" : "retrying will not help: tours queue list)")
    }

    static func queued(_ upload: QueuedUpload) -> [String: Any] {
        ["item": upload.id, "kind": upload.item.kind.rawValue, "id": upload.item.entityId, "propertyId": upload.item.propertyId,
         "state": upload.state.rawValue, "attempts": upload.attempts, "bytes": upload.bytes,
         "lastError": upload.lastError?.description ?? NSNull(), "retryable": upload.lastError?.isRetryable ?? NSNull(),
         "waitingFor": upload.waitingFor ?? NSNull()]
    }

    /// One line of `tours queue list`.
    static func summary(_ upload: QueuedUpload) -> String {
        var line = "\(upload.id)  \(upload.item.kind.rawValue) \(upload.item.entityId)  property \(upload.item.propertyId)  \(upload.state.rawValue)"
        if upload.bytes > 0 { line += "  \(size(upload.bytes))" }
        if let waiting = upload.waitingFor { line += "  after \(waiting)" }
        if let error = upload.lastError {
            line += "\n      after \(count(upload.attempts, "attempt")): \(error.description)" + (error.isRetryable ? "" : " (retrying will not help)")
        }
        return line
    }

    /// A refused upload and what the user can do about it.
    static func refusal(_ upload: QueuedUpload) -> String {
        let drop = "tours queue drop \(upload.id) gives it up"
        let remedy: String
        switch upload.lastError {
        case .server(let status, _, _)? where status == 401 || status == 403:
            remedy = "the server refused the token: run tours init with a valid one, then tours sync"
        case .server(413, _, _)?: remedy = "too large for the server: \(drop)"
        case .server(415, _, _)?: remedy = "the server does not take this file's type: \(drop)"
        case .server(409, _, _)?:
            remedy = "it conflicts with the server's copy (another station changed it): tours property download \(upload.item.propertyId) to take theirs, or \(drop)"
        case .server(404, _, _)?: remedy = "the server no longer has what it belongs to (deleted there?): \(drop)"
        default: remedy = drop
        }
        return "  item \(upload.id), \(upload.item.kind.rawValue) \(upload.item.entityId) of property \(upload.item.propertyId): "
            + "\(upload.lastError?.description ?? "refused")\n    \(remedy)"
    }

    /// "1 attempt", "3 attempts".
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    /// A UUID as the API writes ids: lowercase.
    static func id(_ uuid: UUID) -> String { uuid.uuidString.lowercased() }

    /// Bytes for people, in decimal units: "39 kB", "1.6 MB", "2.10 GB".
    static func size(_ bytes: Int64) -> String {
        switch bytes {
        case ..<1_000: return "\(bytes) B"
        case ..<1_000_000: return "\(bytes / 1_000) kB"
        case ..<1_000_000_000: return String(format: "%.1f MB", Double(bytes) / 1e6)
        default: return String(format: "%.2f GB", Double(bytes) / 1e9)
        }
    }
}

/// Long work's progress: a bar redrawn in place on a terminal (bytes, rate, time left), a
/// plain line per finished item otherwise. Used by one task at a time (the one reading the
/// events, then, once it has ended, the command's).
final class ProgressDisplay: @unchecked Sendable {
    private let totalItems: Int
    private let totalBytes: Int64
    private let terminal = Output.stdoutIsTerminal
    private let started = Date()
    private var sentByItem: [UploadItem: Int64] = [:]
    /// What the server held of each item before this run (resumed uploads): on the bar, not
    /// in the rate.
    private var heldBefore: [UploadItem: Int64] = [:]
    private var finishedBytes: Int64 = 0
    private var items = 0
    private var lastDraw = Date.distantPast

    init(items: Int, bytes: Int64) {
        totalItems = items
        totalBytes = bytes
    }

    func handle(_ event: SyncEvent) {
        switch event {
        case .progress(let item, let sent, _):
            sentByItem[item] = sent
            draw(force: false)
        case .resumed(let item, let offset, _):
            sentByItem[item] = offset
            if heldBefore[item] == nil { heldBefore[item] = offset }
            if terminal { draw(force: true) } else { Output.line("resuming \(item.kind.rawValue) \(item.entityId): \(Output.size(offset)) already on the server") }
        case .uploaded(let item):
            items += 1
            finishedBytes += sentByItem.removeValue(forKey: item) ?? 0
            if terminal { draw(force: true) } else { Output.line("uploaded \(item.kind.rawValue) \(item.entityId) (\(items)/\(totalItems))") }
        case .attemptFailed(let item, let error, let attempt, let willRetry):
            sentByItem[item] = nil
            if terminal { FileHandle.standardOutput.write(Data("\r\u{1B}[K".utf8)) }
            Output.line("attempt \(attempt) of \(item.kind.rawValue) \(item.entityId) failed: \(CLIError.library(error).message)"
                        + (willRetry ? "; retrying" : error.isRetryable ? "; it stays queued" : "; retrying will not help, it stays queued"))
        }
    }

    private func draw(force: Bool) {
        guard terminal, force || Date().timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = Date()
        let sent = finishedBytes + sentByItem.values.reduce(0, +)
        let elapsed = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(max(0, sent - heldBefore.values.reduce(0, +))) / elapsed
        let fraction = totalBytes > 0 ? min(1, Double(sent) / Double(totalBytes)) : Double(items) / Double(max(totalItems, 1))
        let width = 24
        let bar = String(repeating: "#", count: Int(fraction * Double(width))).padding(toLength: width, withPad: "-", startingAt: 0)
        let left = rate > 0 && totalBytes > sent ? String(format: "%.0fs left", Double(totalBytes - sent) / rate) : ""
        let text = "[\(bar)] \(items)/\(totalItems) items  \(Output.size(sent))/\(Output.size(totalBytes))  "
            + "\(Output.size(Int64(rate)))/s  \(left)"
        FileHandle.standardOutput.write(Data("\r\u{1B}[K\(text)".utf8))
    }

    /// Ends the bar's line.
    func finish() {
        if terminal { draw(force: true); FileHandle.standardOutput.write(Data("\n".utf8)) }
    }
}
