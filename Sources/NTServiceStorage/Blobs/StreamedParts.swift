#if canImport(Glibc)
import Glibc
import NTSQLKit
#endif
import NTServiceModel
import NTObjectStorage
import Synchronization

/// The parts of a body sent to the bucket while the body still arrives: each part is sent as
/// soon as the received file holds it (read back from the file, its digest signed), into a
/// multipart upload of the object the body is for, started with the first part. The upload
/// becomes the object only when the body is placed (`BucketBlobStore.place`: after its digest
/// and type are checked, and only where nothing is); a body not placed aborts it. A body no
/// larger than one part is sent whole when placed, and nothing here starts.
final class StreamedParts: Sendable {
    /// The object the parts are for.
    let name: String
    private let store: BucketBlobStore
    private let state = Mutex<State>(State())

    private struct State {
        var upload: Task<String, any Error>?
        var parts: [Task<UploadedPart, any Error>] = []
        /// A descriptor of the received file, for the parts to read.
        var fd: Int32 = -1
    }

    init(name: String, store: BucketBlobStore) {
        self.name = name
        self.store = store
    }

    deinit {
        let fd = state.withLock { $0.fd }
        if fd >= 0 { close(fd) }
    }

    /// On the I/O pool, after a batch: sends each part the file now holds whole, with the
    /// digest the file took of it as it passed.
    func written(_ file: IncomingBlob) {
        let partSize = store.partSize
        while let (number, fd) = state.withLock({ state -> (Int, Int32)? in
            guard file.partDigests.count > state.parts.count else { return nil }
            if state.fd < 0 { state.fd = open(file.path, O_RDONLY | O_CLOEXEC) }
            return (state.parts.count + 1, state.fd)
        }) {
            send(number: number, offset: Int64(number - 1) * partSize, length: partSize, digest: file.partDigests[number - 1], fd: fd)
        }
    }

    /// Once the whole body is in (the file synced): sends what follows the last whole part.
    /// False when no part was sent (the body is one part at most).
    func finished(_ file: IncomingBlob) -> Bool {
        let sent = state.withLock { state -> (Int, Int32)? in
            state.parts.isEmpty ? nil : (state.parts.count + 1, state.fd)
        }
        guard let (number, fd) = sent else { return false }
        let offset = Int64(number - 1) * store.partSize
        if offset < file.size, let digest = file.lastPartDigest {
            send(number: number, offset: offset, length: file.size - offset, digest: digest, fd: fd)
        }
        return true
    }

    private func send(number: Int, offset: Int64, length: Int64, digest: String, fd: Int32) {
        let (store, name) = (self.store, self.name)
        state.withLock { state in
            let upload = state.upload ?? Task(executorPreference: store.io) {
                try await store.calls { try $0.startMultipart(name, contentType: "application/octet-stream") }
            }
            state.upload = upload
            state.parts.append(Task(executorPreference: store.io) {
                guard fd >= 0 else { throw Disk.failure("open the received file", EBADF) }
                let id = try await upload.value
                let etag = try await store.calls { try $0.putPart(name, uploadId: id, number: number, .file(fd: fd, offset: offset, length: length, sha256: digest)) }
                return UploadedPart(number: number, etag: etag, size: length)
            })
        }
    }

    /// Waits for every part; the multipart upload's id and its parts.
    func sent() async throws -> (uploadId: String, parts: [UploadedPart]) {
        let (upload, tasks) = state.withLock { ($0.upload, $0.parts) }
        guard let upload else { throw StorageError(.failed, "no part of \(name) was sent") }
        var parts: [UploadedPart] = []
        for task in tasks { parts.append(try await task.value) }
        return (try await upload.value, parts)
    }

    /// Ends the multipart upload without an object (once its parts are done).
    func abort() async {
        let (upload, tasks) = state.withLock { ($0.upload, $0.parts) }
        for task in tasks { _ = try? await task.value }
        guard let id = try? await upload?.value else { return }
        let name = self.name
        _ = try? await store.calls { try $0.abortMultipart(name, uploadId: id) }
    }
}
