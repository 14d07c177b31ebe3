import Foundation
import NTHashing
import NTThreadPools
import Testing
import TestSupport
@testable import NTServiceStorage

/// A partial file's own record of its durable offset (`PartialFile`, `DurableMark`): a PATCH's
/// bytes and their offset made durable by one flush, and a reopening after a crash that finds
/// the newest mark its bytes prove, whatever the crash left of the newer one.
@Suite struct PartialFileMarkTests {
    static let capacity: Int64 = 100_000

    /// A partial file of the test's own, opened as the folder store opens one.
    final class File {
        let directory = testDirectory("partial-marks").path
        var path: String { directory + "/upload" }

        init() throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func open(recordedOffset: Int64 = 0) throws -> PartialFile {
            let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            return try PartialFile(path: path, fd: fd, recordedOffset: recordedOffset, capacity: PartialFileMarkTests.capacity)
        }

        /// Writes `bytes` at `offset` behind the file's back (what a crash left).
        func overwrite(_ bytes: [UInt8], at offset: Int64) throws {
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            try handle.seek(toOffset: UInt64(offset))
            try handle.write(contentsOf: Data(bytes))
            try handle.close()
        }

        var size: Int64 { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? -1 }
    }

    static let data = BlobStoreContractTests.bytes(90_000)
    static func digest(_ count: Int) -> [UInt8] { StreamingDigest.hash(.sha256, Array(data[..<count])) }

    /// A new partial file of `file`'s with two PATCHes made durable, ending at `first` and
    /// `second`.
    static func twoPatches(_ file: File, _ first: Int, _ second: Int) throws {
        let opened = try file.open()
        try append(opened, from: 0, to: first)
        try append(opened, from: first, to: second)
        opened.park()
    }

    /// Writes `data[from..<to]` and makes it durable.
    static func append(_ file: any PartialBlob, from: Int, to: Int) throws {
        try file.write([Array(data[from..<to])], at: Int64(from), last: true)
        try file.makeDurable(upTo: Int64(to), digest: BlobStoreContractTests.running(Array(data[..<to])))
    }

    @Test func aReopenedFileIsAtItsNewestMarkWhateverTheDatabaseRecorded() throws {
        let file = try File()
        let first = try file.open()
        #expect(first.openedOffset == 0)
        #expect(file.size == Self.capacity + DurableMark.slotsLength) // the marks past a hole
        try Self.append(first, from: 0, to: 30_000)
        try Self.append(first, from: 30_000, to: 50_000)
        try first.write([Array(Self.data[50_000..<70_000])], at: 50_000, last: true) // never made durable
        first.park()
        // The database's record lags (a lazy commit lost) or runs ahead: the mark says.
        for recorded: Int64 in [0, 30_000, 70_000] {
            let again = try file.open(recordedOffset: recorded)
            #expect(again.openedOffset == 50_000)
            #expect(again.openedDigest.copy().finish() == Self.digest(50_000))
        }
    }

    /// The crash hit a flush: its mark reached the disk, some of its bytes did not. The mark
    /// before it (in the other slot, untouched) is the one the bytes prove.
    @Test func aNewerMarkWithoutItsBytesIsPassedOver() throws {
        let file = try File()
        try Self.twoPatches(file, 30_000, 60_000)
        try file.overwrite([UInt8](repeating: 0, count: 1000), at: 45_000)
        let again = try file.open()
        #expect(again.openedOffset == 30_000)
        #expect(again.openedDigest.copy().finish() == Self.digest(30_000))
        // It goes on from there, and its next mark is proven again.
        try Self.append(again, from: 30_000, to: 60_000)
        again.park()
        #expect(try file.open().openedOffset == 60_000)
    }

    /// A mark torn by the crash (its own check fails) is no mark: the other one is.
    @Test func aTornMarkIsPassedOver() throws {
        let file = try File()
        try Self.twoPatches(file, 20_000, 40_000)
        // The newest mark (sequence 3: the opening wrote 1) is in the odd slot; its offset torn.
        try file.overwrite([0xFF], at: Self.capacity + DurableMark.slotLength + 20)
        #expect(try file.open().openedOffset == 20_000)
    }

    /// A new file's first mark is not flushed (its first bytes' flush takes it): a file made
    /// with marks none of which reached the disk holds nothing, whatever the database says.
    @Test func aFileMadeWithMarksThatNeverReachedTheDiskHoldsNothing() throws {
        let file = try File()
        let first = try file.open()
        try first.write([Array(Self.data[..<30_000])], at: 0, last: true) // its flush never happened
        first.park()
        try file.overwrite([UInt8](repeating: 0, count: Int(DurableMark.slotsLength)), at: Self.capacity)
        let again = try file.open(recordedOffset: 30_000)
        #expect(again.openedOffset == 0)
        again.park()
        #expect(try file.open(recordedOffset: 30_000).openedOffset == 0)
    }

    /// A file written before files had marks: opened at the recorded offset as far as it holds
    /// it, and given its first mark, durably (the next opening needs no record).
    @Test func aFileWithoutMarksIsOpenedAtTheRecordedOffsetAndMarked() throws {
        let file = try File()
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(Self.data[..<40_000])))
        let opened = try file.open(recordedOffset: 25_000)
        #expect(opened.openedOffset == 25_000)
        #expect(opened.openedDigest.copy().finish() == Self.digest(25_000))
        opened.park()
        #expect(try file.open(recordedOffset: 0).openedOffset == 25_000)
        // A record past what it holds: what it holds.
        let short = try File()
        #expect(FileManager.default.createFile(atPath: short.path, contents: Data(Self.data[..<10_000])))
        #expect(try short.open(recordedOffset: 25_000).openedOffset == 10_000)
    }

    /// Finishing cuts the marks off: the panorama is the upload's bytes and nothing else.
    @Test func aFinishedUploadIsItsBytesAlone() async throws {
        let directory = testDirectory("partial-finish").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        let io = ThreadPool(name: "finish-io", threads: 1)
        let store = try DirectoryBlobStore(blobs: directory + "/blobs", temporaryDirectory: directory + "/tmp", io: io)
        defer { store.stop() }
        let upload = BlobKey(tenant: 1, kind: .upload, id: UUID().uuidString.lowercased())
        let partial = try await store.openPartial(upload, recordedOffset: 0, capacity: Self.capacity)
        try await store.io.run {
            try Self.append(partial, from: 0, to: Self.data.count)
            partial.park()
        }
        let panorama = BlobKey(tenant: 1, kind: .panorama, id: UUID().uuidString.lowercased())
        #expect(try await store.finish(partial: upload, length: Int64(Self.data.count), as: panorama))
        #expect(FileManager.default.contents(atPath: store.path(panorama)) == Data(Self.data))
    }
}
