import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits

/// docs/storage.md "A read is one snapshot": a floor's plan replaced again and again while
/// others read the floor and the tour document. Every answer is one committed plan: its
/// revision, its rooms and its structure agree. (Run on SQLite, on PostgreSQL, and through
/// three daemons behind nginx by Tests/postgres/api.sh.)
@Suite(.hangGuard, .testThreads) struct SnapshotReadTests {
    /// Two plans with nothing in common: odd revisions are A's, even ones B's.
    struct Plan {
        let name: String
        let rooms: [String]
    }

    @Test func readersSeeOneCommittedPlanWhileItIsReplaced() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let tourId = try #require(try client.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let plans = [Plan(name: "A", rooms: (0..<3).map { _ in newID() }), Plan(name: "B", rooms: (0..<4).map { _ in newID() })]
        let replacements = 120
        let done = Atomic<Bool>(false)
        let writer = Thread.detachedTask {
            defer { done.store(true, ordering: .relaxed) }
            guard let writing = try? harness.client(harness.alpha) else { return }
            for revision in 1...replacements {
                let plan = plans[(revision - 1) % 2]
                let rooms: [[String: Any]] = plan.rooms.map { ["id": $0, "name": plan.name, "outline": [[0, 0], [4, 0], [4, 3]]] }
                let answer = try? writing.send("PUT", "/v1/floors/\(floorId)/plan",
                                               json: ["planId": newID(), "mode": "newScan", "rooms": rooms, "structure": ["plan": plan.name]])
                #expect(answer?.status == 200, "plan \(revision): \(answer?.status ?? 0)")
            }
        }
        let findings = Mutex<(reads: Int, torn: [String])>((0, []))
        /// What one answer's floor says: torn when its parts come from different plans.
        @Sendable func check(_ floor: [String: Any], structure: Any?, _ what: String) {
            let revision = floor["planRevision"] as? Int ?? -1
            let rooms = (floor["rooms"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            let named = (structure as? [String: Any])?["plan"] as? String
            let expected: Plan? = revision == 0 ? nil : plans[(revision - 1) % 2]
            let agrees = rooms == (expected?.rooms ?? []) && (structure == nil || named == expected?.name)
            findings.withLock { findings in
                findings.reads += 1
                if !agrees { findings.torn.append("\(what): revision \(revision), rooms of \(rooms.first.map { plans[0].rooms.contains($0) ? "A" : "B" } ?? "none"), structure \(named ?? "none")") }
            }
        }
        let readers = (0..<2).map { index in
            Thread.detachedTask {
                guard let reading = try? harness.client(harness.alpha) else { return }
                for _ in 0..<5_000 where !done.load(ordering: .relaxed) {
                    if index == 0, let floor = try? reading.send("GET", "/v1/floors/\(floorId)").json {
                        let structure = floor["structure"] // the floor document has none: rooms and revision only
                        check(floor, structure: structure, "floor")
                    } else if let tour = try? reading.send("GET", "/v1/tours/\(tourId)").json,
                              let floor = (tour["floors"] as? [[String: Any]])?.first {
                        check(floor, structure: (floor["plan"] as? [String: Any])?["structure"], "tour")
                    }
                }
            }
        }
        await writer.value
        for reader in readers { await reader.value }
        let (reads, torn) = findings.withLock { $0 }
        #expect(reads > 50, "the readers ran beside the writer")
        #expect(torn.isEmpty, "\(torn.count) of \(reads) answers mixed two plans: \(torn.prefix(5))")
        await harness.finish()
    }
}
