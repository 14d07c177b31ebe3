import Synchronization
import Testing
import TestSupport
@testable import HTTPCore

/// The stream between a connection and its handler, without sockets.
@Suite struct BodyStreamTests {
    /// Counts the connection's wake-ups.
    final class Demands: Sendable {
        private let count = Atomic<Int>(0)
        func signal() { count.wrappingAdd(1, ordering: .sequentiallyConsistent) }
        var value: Int { count.load(ordering: .sequentiallyConsistent) }
    }

    private func append(_ stream: BodyStream, _ text: String, high: Int = 1 << 20) -> Bool {
        Array(text.utf8).withUnsafeBytes { stream.append($0, highWatermark: high) }
    }

    @Test func theFirstAskForTheBodyTellsTheConnection() async throws {
        let demands = Demands()
        let stream = BodyStream { demands.signal() }
        #expect(append(stream, "ab"))
        #expect(demands.value == 0) // nothing asked yet: no 100 Continue
        #expect(try await stream.next() == Array("ab".utf8))
        #expect(demands.value == 1)
        stream.finish()
        #expect(try await stream.next() == nil)
        #expect(stream.received == 2)
    }

    @Test func aboveTheHighWatermarkTheConnectionStopsAndBelowTheLowItResumes() async throws {
        let demands = Demands()
        let stream = BodyStream { demands.signal() }
        #expect(append(stream, "1234", high: 10))
        #expect(append(stream, "5678", high: 10))
        #expect(!append(stream, "9abc", high: 10)) // 12 buffered: stop reading
        #expect(try await stream.next() == Array("1234".utf8)) // 8 left, above the low watermark of 5
        #expect(demands.value == 1) // only the first ask
        #expect(try await stream.next() == Array("5678".utf8)) // 4 left: read again
        #expect(demands.value == 2)
    }

    @Test func aBatchIsHandedOverWhenTheStreamIsFullOrTheBodyEnds() async throws {
        let stream = BodyStream {}
        let batch = Task { try await stream.nextBatch() }
        try await waitUntil("the reader to wait") { stream.isReaderWaiting }
        #expect(append(stream, "12", high: 6))
        #expect(append(stream, "3456", high: 6)) // reaches the watermark: the waiting batch takes it all
        #expect(try await batch.value == [Array("12".utf8), Array("3456".utf8)])
        #expect(append(stream, "78", high: 6))
        stream.finish()
        #expect(try await stream.nextBatch() == [Array("78".utf8)])
        #expect(try await stream.nextBatch() == nil)
    }

    @Test func whatArrivedBeforeAFailureIsHandedOutFirst() async throws {
        let stream = BodyStream {}
        #expect(append(stream, "kept"))
        stream.fail(.clientClosed)
        #expect(try await stream.nextBatch() == [Array("kept".utf8)])
        await #expect(throws: HTTPError.clientClosed) { try await stream.nextBatch() }
    }

    @Test func aWaitingReaderHearsOfTheFailure() async throws {
        let stream = BodyStream {}
        let reader = Task { try await stream.next() }
        try await waitUntil("the reader to wait") { stream.isReaderWaiting }
        stream.fail(.requestTimeout("slow"))
        await #expect(throws: HTTPError.requestTimeout("slow")) { try await reader.value }
    }

    @Test func collectingRefusesMoreThanItsLimit() async throws {
        let stream = BodyStream {}
        #expect(append(stream, "12345"))
        stream.finish()
        await #expect(throws: HTTPError.self) { try await RequestBody(stream: stream).collect(upTo: 4) }
    }

    @Test func afterCloseNothingIsKept() async throws {
        let stream = BodyStream {}
        #expect(append(stream, "dropped"))
        stream.close()
        #expect(append(stream, "ignored")) // the connection keeps reading, to discard
        await #expect(throws: HTTPError.self) { try await stream.next() }
    }
}
