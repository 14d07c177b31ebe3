import Foundation
import TestSupport
import NTHashing
import NoughtyTours
import Synchronization

/// What the library told this worker it stored, one JSON line each, fsynced before the next
/// capture: the soak compares it with the client's database and the server's, so the system
/// is not checked against itself.
final class Ledger {
    private let handle: FileHandle

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteUnknown)
        }
        self.handle = handle
    }

    func append(_ entry: [String: Any]) throws {
        var line = try JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys])
        line.append(0x0a)
        try handle.write(contentsOf: line)
        try handle.synchronize()
    }
}

/// One soak client: captures while the queue drains through faults, then drains to the end.
struct Soak {
    let tours: NoughtyTours
    let ledger: Ledger

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
                case .progress, .resumed: break
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
        try ledger.append(["kind": "property", "id": property.id])
        var count = 0
        for floor in try await tours.properties.floors(of: property) {
            try ledger.append(["kind": "floor", "id": floor.id, "propertyId": property.id])
            let outline: [[Double]] = [[0, 0], [4, 0], [4, 3]]
            // The library keeps a copy of the map; the folder it came in goes.
            let mapFolder = try file(bytes: 20_000, name: "map.bin")
            defer { try? FileManager.default.removeItem(at: mapFolder) }
            let map = mapFolder.appendingPathComponent("map.bin")
            let mapDigest = try digest(map)
            var rooms = try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
                CapturedRoom(name: "A", outline: outline), CapturedRoom(name: "B", outline: outline, height: 2.6),
            ], worldMap: map)
            try ledger.append(["kind": "plan", "mode": "newScan", "floorId": floor.id, "rooms": rooms.map(\.id)])
            try ledger.append(["kind": "worldmap", "floorId": floor.id, "sha256": mapDigest])
            if floor.number == 0 {
                rooms = try await tours.structureCapture.apply(floor: floor, mode: .continueScan, rooms: [CapturedRoom(name: "C", outline: outline)])
                try ledger.append(["kind": "plan", "mode": "continueScan", "floorId": floor.id, "rooms": rooms.map(\.id)])
            }
            for index in 0..<3 {
                let room = index == 2 ? nil : rooms[index]
                let session: PanoramaCaptureSession
                if let room { session = try await tours.panoramaCapture.session(room: room) } else { session = try await tours.panoramaCapture.session(floor: floor) }
                let folder = try file(bytes: Int.random(in: 10_000...600_000), name: "pano.jpg")
                let sha256 = try digest(folder.appendingPathComponent("pano.jpg"))
                let outcome = try await session.record(folder: folder, image: "pano.jpg", readings: CaptureReadings(iso: 200, shutterSeconds: 0.01))
                if case .kept(let id) = outcome {
                    count += 1
                    try ledger.append(["kind": "panorama", "id": id, "floorId": floor.id, "roomId": room?.id ?? NSNull(), "sha256": sha256])
                }
            }
        }
        return count
    }

    private func digest(_ file: URL) throws -> String {
        ByteEncoding.hex(StreamingDigest.hash(.sha256, Array(try Data(contentsOf: file))))
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
        let random = (0..<bytes / 8).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
        try Data(ImageSignature.stamped(random, as: name)).write(to: folder.appendingPathComponent(name))
        return folder
    }
}
