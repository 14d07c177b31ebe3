import Synchronization
import Testing
@testable import NTImagePreviews

/// The one image memory: work takes its share or waits for it, work larger than the whole is
/// refused, a share is given back when the work ends (thrown out of too), and small work that
/// fits is not held behind large work that waits.
@Suite struct ImageMemoryTests {
    @Test func workLargerThanTheWholeIsRefusedAtOnce() async throws {
        let memory = ImageMemory(limit: 100)
        await #expect(throws: PreviewError.self) { try await memory.holding(101, for: "a bomb") { () } }
        #expect(memory.inUse == 0)
    }

    @Test func aShareIsHeldForTheWorkAndGivenBackAfterItEvenWhenItFails() async throws {
        let memory = ImageMemory(limit: 100)
        try await memory.holding(60, for: "a preview") { #expect(memory.inUse == 60) }
        struct Failed: Error {}
        await #expect(throws: Failed.self) { try await memory.holding(60, for: "a preview") { throw Failed() } }
        #expect(memory.inUse == 0 && memory.peak == 60)
    }

    @Test func workThatDoesNotFitWaitsAndSmallWorkThatFitsPassesIt() async throws {
        let memory = ImageMemory(limit: 100)
        let order = Order()
        let (release, released) = AsyncStream<Void>.makeStream()
        let tiling = Task {
            try await memory.holding(70, for: "a tiling") {
                order.add("tiling")
                for await _ in release { break }
            }
        }
        for _ in 0..<1_000_000 where memory.inUse < 70 { await Task.yield() }
        try #require(memory.inUse == 70)
        // 50 more cannot fit beside the tiling's 70: it waits; 20 can, and goes at once.
        let large = Task { try await memory.holding(50, for: "a large preview") { order.add("large") } }
        try await memory.holding(20, for: "a small preview") { order.add("small") }
        #expect(order.names == ["tiling", "small"])
        released.yield()
        try await tiling.value
        try await large.value
        #expect(order.names == ["tiling", "small", "large"])
        #expect(memory.inUse == 0 && memory.peak <= 100)
    }
}

/// What ran, in order, from several tasks.
private final class Order: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ name: String) { list.withLock { $0.append(name) } }
    var names: [String] { list.withLock { $0 } }
}
