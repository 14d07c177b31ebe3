import Foundation
import NoughtyTours

// A client process for the tests to kill: drains a storage directory's queue to a server,
// printing each transfer's progress, then "idle" once nothing is left to send.
// usage: SyncWorker SERVER TOKEN STORAGE_DIR [MAX_SEND_BYTES_PER_SECOND] [RESUMABLE_THRESHOLD]

let arguments = CommandLine.arguments
guard arguments.count >= 4, let server = URL(string: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: SyncWorker SERVER TOKEN STORAGE_DIR [MAX_SEND_BYTES_PER_SECOND] [RESUMABLE_THRESHOLD]\n".utf8))
    exit(2)
}
var options = SyncOptions()
options.initialBackoff = .milliseconds(5)
options.maxBackoff = .milliseconds(40)
if arguments.count > 4, let cap = Int64(arguments[4]), cap > 0 { options.maxSendBytesPerSecond = cap }
if arguments.count > 5, let threshold = Int64(arguments[5]) { options.resumableThreshold = threshold }

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    let tours = try await NoughtyTours(configuration: Configuration(server: server, token: arguments[2],
                                                                    storageDirectory: URL(fileURLWithPath: arguments[3]), sync: options))
    let events = tours.events()
    let printer = Task {
        for await event in events {
            if case .progress(let item, let sent, let total) = event { say("progress \(item.entityId) \(sent) \(total)") }
        }
    }
    try await tours.start()
    await tours.idle()
    await tours.stop()
    printer.cancel()
    say("idle")
} catch {
    FileHandle.standardError.write(Data("SyncWorker: \(error)\n".utf8))
    exit(1)
}
