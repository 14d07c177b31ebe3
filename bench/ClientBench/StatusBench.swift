import Foundation
import NoughtyTours

/// status(of:) with 100 downloaded properties x 1,000 panoramas, and statusUpdates' delay
/// from a write to the value it yields; each beside a reference taken in the same run.
enum StatusBench {
    static func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("client-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tours = try await NoughtyTours(configuration: Configuration(server: URL(string: "http://127.0.0.1:9")!, token: "bench",
                                                                        storageDirectory: directory))
        var properties: [Property] = []
        for index in 0..<100 {
            properties.append(try await tours.seedDownloadedPropertyForBenchmark(name: "Property \(index)", floorCount: 2, panoramas: 1000))
        }

        // status(of:), 1,000 calls over the 100 properties; the reference is property(id:),
        // one indexed row through the same store.
        var statusTimes: [Double] = [], lookupTimes: [Double] = []
        for round in 0..<1000 {
            let property = properties[round % properties.count]
            var start = ContinuousClock.now
            let status = try await tours.properties.status(of: property)
            statusTimes.append(ClientBench.milliseconds(since: start))
            precondition(status.panoramaCount == 1000 && status.panoramasUploaded == 1000 && status.roomCount == 20)
            start = ContinuousClock.now
            _ = try await tours.properties.property(id: property.id)
            lookupTimes.append(ClientBench.milliseconds(since: start))
        }

        // statusUpdates: from a write's commit (its call returned: committed, observers told) to
        // the value arriving at the iterating task; the reference is the write itself (a plan
        // of one more room, committed with fsync).
        let watched = properties[0]
        let floor = try await tours.properties.floors(of: watched)[0]
        var iterator = tours.properties.statusUpdates(for: watched).makeAsyncIterator()
        _ = await iterator.next()
        var delays: [Double] = [], writes: [Double] = []
        var rooms: [CapturedRoom] = []
        for _ in 0..<100 {
            rooms.append(CapturedRoom(name: "Room", outline: [[0, 0], [1, 0], [1, 1]]))
            let start = ContinuousClock.now
            try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: rooms)
            writes.append(ClientBench.milliseconds(since: start))
            let committed = ContinuousClock.now
            let value = await iterator.next()
            delays.append(ClientBench.milliseconds(since: committed))
            precondition(value?.roomCount == rooms.count + 10) // and floor 1's ten
        }

        print("Client library, local store with 100 downloaded properties x 1,000 panoramas")
        print(String(format: "  status(of:) median %.3f ms (target < 1 ms); property(id:) in the same run %.3f ms (%.1fx)",
                     ClientBench.median(statusTimes), ClientBench.median(lookupTimes), ClientBench.median(statusTimes) / ClientBench.median(lookupTimes)))
        print(String(format: "  statusUpdates: committed write to value received, median %.3f ms (target < 5 ms); the write itself %.3f ms",
                     ClientBench.median(delays), ClientBench.median(writes)))
    }
}
