import Testing
@testable import NTServiceStorage

/// When a received body's bytes are handed to the disk before its flush (`Writeback`).
@Suite struct WritebackTests {
    /// Bodies arriving together in small batches (the body budget shared) start their
    /// writeback every step, not every batch.
    @Test func smallBatchesAreHandedOverAStepAtATime() {
        var writeback = Writeback(from: 0)
        let batch = Writeback.step / 8
        var handed: [Range<Int64>] = []
        for index in 1...16 {
            if let range = writeback.due(upTo: Int64(index) * batch, last: false) { handed.append(range) }
        }
        #expect(handed == [0..<Writeback.step, Writeback.step..<(2 * Writeback.step)])
    }

    /// The last batch goes at once, whatever its size, so the disk writes it while it is hashed.
    @Test func theLastBatchIsHandedOverAtOnce() {
        var writeback = Writeback(from: 4096)
        let early = writeback.due(upTo: 4096 + 512 * 1024, last: false)
        let last = writeback.due(upTo: 4096 + 600 * 1024, last: true)
        let again = writeback.due(upTo: 4096 + 600 * 1024, last: true)
        let whole: Range<Int64> = 4096..<(4096 + 600 * 1024)
        #expect(early == nil)
        #expect(last == whole)
        #expect(again == nil) // nothing new
    }

    /// Bytes rolled back are written over: their writeback starts again from there.
    @Test func aRollbackStartsAgainWhereTheBytesAreWrittenOver() {
        var writeback = Writeback(from: 0)
        let step = writeback.due(upTo: 2 * Writeback.step, last: false)
        writeback.rewind(to: 100)
        let over = writeback.due(upTo: 200, last: true)
        #expect(step == 0..<(2 * Writeback.step))
        #expect(over == 100..<200)
    }
}
