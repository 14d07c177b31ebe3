import Foundation
import NoughtyTours

/// The upload queue draining a property's panoramas (one per file) with the default options
/// (4 transfers at once): the seconds from start() to idle(), and the process's peak RSS over
/// that time. The capture before it is not timed.
enum DrainBench {
    static func run(server: URL, token: String, files: URL) async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("client-drain-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        let tours = try await NoughtyTours(configuration: Configuration(server: server, token: token, storageDirectory: storage))
        let property = try await tours.properties.createProperty(name: "Drain bench", floorCount: 1)
        let floor = try await tours.properties.floors(of: property)[0]
        let session = try await tours.panoramaCapture.session(floor: floor)
        let names = try FileManager.default.contentsOfDirectory(atPath: files.path).filter { $0.hasSuffix(".jpg") }.sorted()
        for name in names {
            // The capture takes over (and deletes) its folder: each file goes in a copy.
            let folder = storage.appendingPathComponent("capture-\(name)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: files.appendingPathComponent(name), to: folder.appendingPathComponent(name))
            _ = try await session.record(folder: folder, image: name, readings: CaptureReadings(iso: 400, shutterSeconds: 1.0 / 60))
        }
        resetPeakRSS()
        let start = ContinuousClock.now
        try await tours.start()
        await tours.idle()
        let seconds = ClientBench.milliseconds(since: start) / 1000
        let peak = peakRSSMegabytes()
        let status = try await tours.properties.status(of: property)
        guard status.isComplete, status.panoramasUploaded == names.count else {
            FileHandle.standardError.write(Data("the drain did not complete: \(status)\n".utf8))
            exit(1)
        }
        // The server's copies go too, so that rounds do not fill its disk.
        try await tours.properties.deleteProperty(property)
        await tours.idle()
        await tours.stop()
        print(String(format: "%.3f %.1f", seconds, peak))
    }

    /// Linux: writing 5 to clear_refs resets VmHWM, the peak resident set.
    private static func resetPeakRSS() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    private static func peakRSSMegabytes() -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }
}
