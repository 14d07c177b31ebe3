import Testing
@testable import NTHTTPCore

/// The body buffers' pool: kept for reuse while bodies arrive, given back once they stop.
@Suite struct BodyBufferPoolTests {
    private func cycle(_ pool: BodyBufferPool, buffers: Int) {
        let taken = (0..<buffers).map { _ in pool.take() }
        for buffer in taken {
            buffer.storeBytes(of: 0xAB, as: UInt8.self) // its pages are touched, as a body's are
            pool.recycle(buffer)
        }
    }

    @Test func buffersAreKeptUpToTheBudget() {
        let pool = BodyBufferPool(bufferSize: 4096, budget: 4 * 4096)
        cycle(pool, buffers: 6)
        #expect(pool.keptCount == 4)
    }

    @Test func keptBuffersGoBackOnceNoBodyTookOneForAWholePeriod() {
        let pool = BodyBufferPool(bufferSize: 4096, budget: 8 * 4096)
        cycle(pool, buffers: 3)
        pool.releaseIdle() // buffers were taken in this period: kept
        #expect(pool.keptCount == 3)
        pool.releaseIdle() // a whole period without a body
        #expect(pool.keptCount == 0)
        cycle(pool, buffers: 2) // and the next body maps buffers anew
        #expect(pool.keptCount == 2)
    }

    @Test func buffersTakenInEveryPeriodStay() {
        let pool = BodyBufferPool(bufferSize: 4096, budget: 8 * 4096)
        for _ in 0..<5 {
            cycle(pool, buffers: 2)
            pool.releaseIdle()
            #expect(pool.keptCount == 2)
        }
    }
}
