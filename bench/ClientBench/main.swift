// make bench, the client library.
//   ClientBench                              status(of:) and statusUpdates on a large local store
//   ClientBench drain SERVER TOKEN FILES_DIR the queue draining every file of FILES_DIR as a
//                                            panorama; prints "SECONDS PEAK_RSS_MB"
import Foundation

enum ClientBench {
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        milliseconds(between: start, and: .now)
    }

    static func milliseconds(between start: ContinuousClock.Instant, and end: ContinuousClock.Instant) -> Double {
        let elapsed = end - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }
}

let arguments = CommandLine.arguments
if arguments.count == 5, arguments[1] == "drain", let server = URL(string: arguments[2]) {
    try await DrainBench.run(server: server, token: arguments[3], files: URL(fileURLWithPath: arguments[4]))
} else if arguments.count == 1 {
    try await StatusBench.run()
} else {
    FileHandle.standardError.write(Data("usage: ClientBench [drain SERVER TOKEN FILES_DIR]\n".utf8))
    exit(2)
}
