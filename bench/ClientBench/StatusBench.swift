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

        // statusUpdates: from the commit that changes the value to the value arriving at a task
        // already waiting for it; the reference is the write itself (a plan of one more room,
        // committed with fsync), timed by the caller.
        let watched = properties[0]
        let floor = try await tours.properties.floors(of: watched)[0]
        let received = Arrivals()
        let reader = Task {
            for await value in tours.properties.statusUpdates(for: watched) { await received.add(value, at: .now) }
        }
        _ = await received.wait(count: 1) // the current value: the stream is live
        var delays: [Double] = [], writes: [Double] = []
        var rooms: [CapturedRoom] = []
        for round in 0..<100 {
            rooms.append(CapturedRoom(name: "Room", outline: [[0, 0], [1, 0], [1, 1]]))
            let start = ContinuousClock.now
            try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: rooms)
            writes.append(ClientBench.milliseconds(since: start))
            let (value, arrived) = await received.wait(count: round + 2)
            guard let committed = await tours.lastCommitForBenchmark else { preconditionFailure("no commit seen") }
            delays.append(ClientBench.milliseconds(between: committed, and: arrived))
            precondition(value.roomCount == rooms.count + 10) // and floor 1's ten
        }
        reader.cancel()

        print("Client library, local store with 100 downloaded properties x 1,000 panoramas")
        print(String(format: "  status(of:) median %.3f ms (target < 1 ms); property(id:) in the same run %.3f ms (%.1fx)",
                     ClientBench.median(statusTimes), ClientBench.median(lookupTimes), ClientBench.median(statusTimes) / ClientBench.median(lookupTimes)))
        print(String(format: "  statusUpdates: committed write to value received, median %.3f ms (target < 5 ms); the write itself %.3f ms",
                     ClientBench.median(delays), ClientBench.median(writes)))
    }
}

/// Status values as they arrive at the reading task, with the moment each arrived.
actor Arrivals {
    private var values: [(PropertyStatus, ContinuousClock.Instant)] = []
    private var waiters: [(Int, CheckedContinuation<(PropertyStatus, ContinuousClock.Instant), Never>)] = []

    func add(_ value: PropertyStatus, at instant: ContinuousClock.Instant) {
        values.append((value, instant))
        let ready = waiters.filter { $0.0 <= values.count }
        waiters.removeAll { $0.0 <= values.count }
        for (count, waiter) in ready { waiter.resume(returning: values[count - 1]) }
    }

    /// The `count`-th value (1-based) and when it arrived, once it has.
    func wait(count: Int) async -> (PropertyStatus, ContinuousClock.Instant) {
        if values.count >= count { return values[count - 1] }
        return await withCheckedContinuation { waiters.append((count, $0)) }
    }
}
