import Foundation
import NoughtyTours
import Synchronization

/// One soak client: captures while the queue drains through faults, then drains to the end.
struct Soak {
    let tours: NoughtyTours

    /// Counts what the queue reports.
    final class Tally: Sendable {
        let uploaded = Atomic<Int>(0)
        let failedAttempts = Atomic<Int>(0)
        /// Items that failed for good with attempts left: must stay 0.
        let failedEarly = Mutex<[String]>([])
    }

    func run(seconds: Double) async throws -> String {
        let tally = Tally()
        let events = tours.events()
        let counter = Task {
            for await event in events {
                switch event {
                case .uploaded: tally.uploaded.add(1, ordering: .relaxed)
                case .attemptFailed(let item, let error, let attempt, let willRetry):
                    tally.failedAttempts.add(1, ordering: .relaxed)
                    if !willRetry, attempt < 3 { tally.failedEarly.withLock { $0.append("\(item.kind) \(item.entityId): \(error)") } }
                case .progress: break
                }
            }
        }
        try await tours.start()
        let deadline = Date().addingTimeInterval(seconds)
        var properties = 0, panoramas = 0
        while Date() < deadline {
            panoramas += try await captureProperty(number: properties)
            properties += 1
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...400)))
        }
        // The end: drain, and tap sync while anything failed (bounded).
        var syncs = 0
        for _ in 0..<40 {
            await tours.idle()
            guard try await !unfinished().isEmpty else { break }
            try await tours.sync()
            syncs += 1
        }
        await tours.idle()
        let left = try await unfinished()
        await tours.stop()
        counter.cancel()
        let early = tally.failedEarly.withLock { $0 }
        for line in early { FileHandle.standardError.write(Data("failed with attempts left: \(line)\n".utf8)) }
        return "summary properties=\(properties) panoramas=\(panoramas) uploaded=\(tally.uploaded.load(ordering: .relaxed)) "
            + "failedAttempts=\(tally.failedAttempts.load(ordering: .relaxed)) syncs=\(syncs) failedWithAttemptsLeft=\(early.count) "
            + "unfinishedProperties=\(left.count)"
    }

    /// A property of two floors: a plan with two rooms and a world map on each, a continued
    /// scan on the first, and panoramas of 10 KB to 600 KB in rooms and on floors.
    private func captureProperty(number: Int) async throws -> Int {
        let property = try await tours.properties.createProperty(name: "Soak \(number)", floorCount: 2, metadata: ["n": String(number)])
        var count = 0
        for floor in try await tours.properties.floors(of: property) {
            let outline: [[Double]] = [[0, 0], [4, 0], [4, 3]]
            // The library keeps a copy of the map; the folder it came in goes.
            let mapFolder = try file(bytes: 20_000, name: "map.bin")
            defer { try? FileManager.default.removeItem(at: mapFolder) }
            let rooms = try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
                CapturedRoom(name: "A", outline: outline), CapturedRoom(name: "B", outline: outline, height: 2.6),
            ], worldMap: mapFolder.appendingPathComponent("map.bin"))
            if floor.number == 0 {
                try await tours.structureCapture.apply(floor: floor, mode: .continueScan, rooms: [CapturedRoom(name: "C", outline: outline)])
            }
            for index in 0..<3 {
                let session = index == 2 ? try await tours.panoramaCapture.session(floor: floor) : try await tours.panoramaCapture.session(room: rooms[index])
                let outcome = try await session.record(folder: try file(bytes: Int.random(in: 10_000...600_000), name: "pano.jpg"),
                                                       image: "pano.jpg", readings: CaptureReadings(iso: 200, shutterSeconds: 0.01))
                if case .kept = outcome { count += 1 }
            }
        }
        return count
    }

    /// Properties whose status is not complete.
    private func unfinished() async throws -> [Property] {
        var left: [Property] = []
        for property in try await tours.properties.properties() where try await !tours.properties.status(of: property).isComplete {
            left.append(property)
        }
        return left
    }

    private func file(bytes: Int, name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<bytes / 8).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } })
        try data.write(to: folder.appendingPathComponent(name))
        return folder
    }
}
