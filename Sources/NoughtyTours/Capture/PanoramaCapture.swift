#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NTHashing
import NTSQLiteDB

/// What a recorded panorama came to.
public enum PanoramaOutcome: Sendable, Equatable {
    case kept(panoramaId: String)
    case discarded(DiscardReason)
}

/// How a capture session ended (the seed's PanoramaCaptureEvent).
public enum PanoramaCaptureEvent: Sendable, Equatable {
    /// `capturedInSession` counts this session's kept panoramas, not the floor's total.
    case finished(Floor, capturedInSession: Int)
    case cancelled
}

/// Panorama capture into a floor or a room (the seed's PanoramaCapture, without the screen).
public struct PanoramaCapture: Sendable {
    let store: LocalStore

    /// A session into the floor; `notFound` for a deleted floor.
    public func session(floor: Floor) async throws(NoughtyToursError) -> PanoramaCaptureSession {
        try await store.read { db in try Records.requireFloor(db, floor.id) }
        return PanoramaCaptureSession(store: store, floor: floor, room: nil)
    }

    /// A session into the room; `notFound` for a deleted room.
    public func session(room: Room) async throws(NoughtyToursError) -> PanoramaCaptureSession {
        let floor = try await store.read { db -> Floor? in
            guard try db.first("SELECT 1 FROM rooms WHERE id = ?", room.id) != nil else { return nil }
            return try Records.floor(db, id: room.floorId)
        }
        guard let floor else { throw .notFound }
        return PanoramaCaptureSession(store: store, floor: floor, room: room)
    }
}

/// One visit to the capture screen: panoramas recorded one after another, each graded.
public actor PanoramaCaptureSession {
    let store: LocalStore
    /// The storage's thread: a recording copies and fsyncs the image.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { store.thread.asUnownedSerialExecutor() }
    public let floor: Floor
    public let room: Room?
    private var kept = 0
    private var ended = false

    init(store: LocalStore, floor: Floor, room: Room?) {
        self.store = store
        self.floor = floor
        self.room = room
    }

    /// Before recording: very low light blocks the shot.
    public func checkLight(_ readings: CaptureReadings) throws(NoughtyToursError) {
        if let reason = PanoramaGrading.lightBlock(readings) { throw .captureBlocked(reason: reason) }
    }

    /// A recorded panorama: its folder holds the image file `image`. Kept, it moves into local
    /// storage and the upload queue in one transaction; discarded (or blocked), its folder is
    /// deleted and nothing reaches the store or the queue. `position`: where on the floor's plan
    /// it was taken, when known; it goes to the server with the panorama.
    public func record(folder: URL, image: String, readings: CaptureReadings,
                       position: PanoramaPosition? = nil) async throws(NoughtyToursError) -> PanoramaOutcome {
        guard !ended else { throw .invalidInput("the capture session has ended") }
        if let reason = PanoramaGrading.lightBlock(readings) {
            try? FileManager.default.removeItem(at: folder)
            throw .captureBlocked(reason: reason)
        }
        if let reason = PanoramaGrading.discard(readings) {
            try? FileManager.default.removeItem(at: folder)
            return .discarded(reason)
        }
        let source = folder.appendingPathComponent(image)
        // By its bytes: a renamed text file, random bytes or an empty file never reach the queue.
        let contentType = try await store.files { () throws(NoughtyToursError) in
            try ImageContent.inspect(file: source.path, name: image).get().format.contentType
        }
        let id = UUID().uuidString.lowercased()
        let target = store.directory.appendingPathComponent("panoramas/\(id).\(source.pathExtension.lowercased())")
        let (size, digest) = try LocalFiles.copy(source, to: target)
        let floor = self.floor, room = self.room
        do {
            try await store.write { db in
                try Records.requireFloor(db, floor.id)
                // A room a later newScan removed: the panorama goes to its floor, as the
                // server puts a removed room's panoramas.
                let roomId = try room.flatMap { room in try db.first("SELECT 1 FROM rooms WHERE id = ?", room.id) == nil ? nil : room.id }
                try db.run("""
                    INSERT INTO panoramas (id, property_id, floor_id, room_id, path, content_type, size, sha256, created_at, x, y, heading, camera_height)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?, ?, ?, ?)
                    """, id, floor.propertyId, floor.id, roomId, target.path, contentType, size, digest, position?.x, position?.y, position?.heading,
                    position?.height)
                // After the floor's plan when it has one (a room's panorama needs its room), else after the floor.
                let after = try Queue.latest(db, kinds: [.plan, .floor], entity: floor.id)
                try Queue.add(db, property: floor.propertyId, kind: .panorama, entity: id, dependsOn: after)
            }
        } catch {
            try? FileManager.default.removeItem(at: target)
            throw error
        }
        try? FileManager.default.removeItem(at: folder)
        kept += 1
        return .kept(panoramaId: id)
    }

    /// Ends the session: what it kept, this visit only.
    public func finish() -> PanoramaCaptureEvent {
        ended = true
        return .finished(floor, capturedInSession: kept)
    }
}

/// Files brought into local storage.
enum LocalFiles {
    /// Copies a file into local storage, hashing it as it goes, durably (the file and its
    /// directory fsynced: the name survives a power loss too); returns size and SHA-256 (hex).
    /// A source that cannot be read is `invalidInput`.
    static func copy(_ source: URL, to target: URL) throws(NoughtyToursError) -> (Int64, String) {
        guard FileManager.default.createFile(atPath: target.path, contents: nil), let output = FileHandle(forWritingAtPath: target.path) else {
            throw .storageUnavailable(reason: "cannot write \(target.path)")
        }
        do {
            let result = try read(source, into: output)
            try output.synchronize()
            try output.close()
            try syncDirectory(of: target.path)
            return result
        } catch {
            try? output.close()
            try? FileManager.default.removeItem(at: target)
            if let error = error as? NoughtyToursError { throw error }
            throw .storageUnavailable(reason: "copying \(source.lastPathComponent): \(error)")
        }
    }

    /// Makes the entries of `path`'s directory durable (a new name in it survives a crash).
    static func syncDirectory(of path: String) throws(NoughtyToursError) {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .storageUnavailable(reason: "cannot open \(directory): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .storageUnavailable(reason: "cannot sync \(directory): \(String(cString: strerror(errno)))") }
    }

    /// A local file's size and SHA-256 (hex).
    static func digest(of path: String) throws(NoughtyToursError) -> (Int64, String) {
        do {
            return try read(URL(fileURLWithPath: path), into: nil)
        } catch let error as NoughtyToursError {
            throw error
        } catch {
            throw .storageUnavailable(reason: "reading \(path): \(error)")
        }
    }

    /// Reads `source` through, hashing it, writing it to `output` when there is one.
    private static func read(_ source: URL, into output: FileHandle?) throws -> (Int64, String) {
        guard let input = FileHandle(forReadingAtPath: source.path) else { throw NoughtyToursError.invalidInput("cannot read \(source.path)") }
        defer { try? input.close() }
        let digest = StreamingDigest(.sha256)
        var size: Int64 = 0
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            try output?.write(contentsOf: chunk)
            digest.update(Array(chunk))
            size += Int64(chunk.count)
        }
        return (size, ByteEncoding.hex(digest.finish()))
    }
}
