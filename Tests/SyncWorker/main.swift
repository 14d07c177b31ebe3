import Foundation
import NoughtyTours

// A client process for the tests and the soak to start and kill.
//   SyncWorker drain SERVER TOKEN STORAGE [MAX_SEND_BYTES_PER_SECOND] [RESUMABLE_THRESHOLD]
//     drains the storage directory's queue, printing each transfer's progress, then "idle".
//   SyncWorker soak SERVER TOKEN STORAGE SECONDS LEDGER
//     captures properties, plans, world maps and panoramas for SECONDS while the queue drains,
//     each acknowledged capture appended to LEDGER (JSON lines, fsynced), then drains to the
//     end (tapping sync() when items failed, as a user would) and prints one line of figures:
//     "summary key=value ...".

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("SyncWorker: \(message)\n".utf8))
    exit(message.hasPrefix("usage") ? 2 : 1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 5, let server = URL(string: arguments[2]) else {
    fail("usage: SyncWorker drain|soak SERVER TOKEN STORAGE ...")
}
let storage = URL(fileURLWithPath: arguments[4])
var options = SyncOptions()
options.initialBackoff = .milliseconds(20)
options.maxBackoff = .milliseconds(300)

do {
    switch arguments[1] {
    case "drain":
        if arguments.count > 5, let cap = Int64(arguments[5]), cap > 0 { options.maxSendBytesPerSecond = cap }
        if arguments.count > 6, let threshold = Int64(arguments[6]) { options.resumableThreshold = threshold }
        let tours = try await NoughtyTours(configuration: Configuration(server: server, token: arguments[3], storageDirectory: storage, sync: options))
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
    case "soak":
        guard arguments.count == 7, let seconds = Double(arguments[5]) else { fail("usage: SyncWorker soak SERVER TOKEN STORAGE SECONDS LEDGER") }
        options.lowSpeedTime = .seconds(2)
        options.connectTimeout = .seconds(2)
        options.resumableThreshold = 256 << 10 // many panoramas take the tus path
        let tours = try await NoughtyTours(configuration: Configuration(server: server, token: arguments[3], storageDirectory: storage, sync: options))
        say(try await Soak(tours: tours, ledger: try Ledger(path: arguments[6])).run(seconds: seconds))
    default:
        fail("usage: SyncWorker drain|soak SERVER TOKEN STORAGE ...")
    }
} catch {
    fail("\(error)")
}
