#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Hashing
import Synchronization

/// The live state of one resumable upload's partial file, shared by the PATCHes that write
/// it. What is durable (fsynced, and the offset the database records) is kept apart from what
/// the PATCH in progress has written since, with a running SHA-256 for each, so that:
/// - a finished PATCH makes its bytes durable without hashing anything again;
/// - a newer PATCH takes over at once (tus: nobody waits on a stale lock) by rolling the
///   partial file back to the durable state, and the older PATCH stops on its next write;
/// - a checksum mismatch drops just that PATCH's bytes.
final class UploadSession: @unchecked Sendable {
    let key: BlobKey
    private let state: Mutex<State>

    private struct State {
        var fd: Int32
        var durableOffset: Int64
        var durableDigest: StreamingDigest
        var liveOffset: Int64
        var liveDigest: StreamingDigest
        var writebackStarted: Int64
        /// The PATCH allowed to write; another one's writes fail.
        var owner: UInt64?
        /// The digest of the current PATCH's bytes, for its Upload-Checksum.
        var chunkDigest: StreamingDigest?
        var closed = false
    }

    private static let tokens = Atomic<UInt64>(0)
    private static let writebackStep: Int64 = 1 << 20

    /// Opens the session of an upload whose database offset is `durableOffset`: bytes past it
    /// were never acknowledged and are cut off; the ones before are hashed, once. A file
    /// holding less than that (lost in a crash between finishing and committing) is never
    /// extended: the session continues from what it holds (`durableOffset` says so).
    init(key: BlobKey, fd: Int32, durableOffset recorded: Int64) throws(ServiceError) {
        self.key = key
        let size = lseek(fd, 0, SEEK_END)
        guard size >= 0 else { throw BlobStore.failure("lseek", errno) }
        let durableOffset = min(recorded, Int64(size))
        guard ftruncate(fd, off_t(durableOffset)) == 0 else { throw BlobStore.failure("ftruncate", errno) }
        let digest = StreamingDigest(.sha256)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var position: Int64 = 0
        while position < durableOffset {
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, Int(min(Int64($0.count), durableOffset - position)), off_t(position)) }
            guard count > 0 else {
                Glibc.close(fd)
                throw ServiceError(.internal, "the partial file of upload \(key.id) is shorter than its recorded offset")
            }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            position += Int64(count)
        }
        state = Mutex(State(fd: fd, durableOffset: durableOffset, durableDigest: digest.copy(), liveOffset: durableOffset,
                            liveDigest: digest, writebackStarted: durableOffset))
    }

    deinit {
        state.withLock { if !$0.closed { Glibc.close($0.fd) } }
    }

    var durableOffset: Int64 { state.withLock { $0.durableOffset } }

    /// Makes the caller the writer, stopping any older PATCH; returns its token and the
    /// durable offset it must continue from.
    func claim(checksum algorithm: DigestAlgorithm?) throws(ServiceError) -> (token: UInt64, offset: Int64) {
        let token = Self.tokens.wrappingAdd(1, ordering: .relaxed).newValue
        return try state.withLock { (state) throws(ServiceError) -> (UInt64, Int64) in
            guard !state.closed else { throw ServiceError.notFound("upload", key.id) }
            try Self.rollBack(&state)
            state.owner = token
            state.chunkDigest = algorithm.map(StreamingDigest.init)
            return (token, state.durableOffset)
        }
    }

    /// Gives up a claim that wrote nothing (the PATCH was refused).
    func release(_ token: UInt64) {
        state.withLock { if $0.owner == token { $0.owner = nil } }
    }

    /// Appends the next bytes of the claimant's body.
    func append(_ token: UInt64, _ bytes: UnsafeRawBufferPointer) throws(ServiceError) {
        try state.withLock { (state) throws(ServiceError) in
            guard state.owner == token, !state.closed else {
                throw ServiceError.conflict("a newer PATCH to upload \(key.id) took over")
            }
            var written = 0
            while written < bytes.count {
                let count = pwrite(state.fd, bytes.baseAddress! + written, bytes.count - written, off_t(state.liveOffset + Int64(written)))
                if count < 0 {
                    if errno == EINTR { continue }
                    let error = BlobStore.failure("write", errno)
                    try? Self.rollBack(&state)
                    state.owner = nil
                    throw error
                }
                written += count
            }
            state.liveDigest.update(bytes)
            state.chunkDigest?.update(bytes)
            state.liveOffset += Int64(bytes.count)
            if state.liveOffset - state.writebackStarted >= Self.writebackStep {
                _ = nt_start_writeback(state.fd, state.writebackStarted, state.liveOffset - state.writebackStarted)
                state.writebackStarted = state.liveOffset
            }
        }
    }

    /// The claimant's body is complete: checks its checksum, makes its bytes durable, and
    /// returns the new durable offset. A mismatch drops the bytes (460).
    func commit(_ token: UInt64, expected checksum: [UInt8]?) throws(ServiceError) -> Int64 {
        try state.withLock { (state) throws(ServiceError) -> Int64 in
            guard state.owner == token, !state.closed else {
                throw ServiceError.conflict("a newer PATCH to upload \(key.id) took over")
            }
            state.owner = nil
            if let checksum, let digest = state.chunkDigest?.finish(), !constantTimeEquals(digest, checksum) {
                try Self.rollBack(&state)
                throw ServiceError(.checksumMismatch, "the PATCH body does not match its Upload-Checksum; it was discarded")
            }
            return try Self.makeDurable(&state)
        }
    }

    /// The claimant's connection ended before its body did: what arrived is kept when it can
    /// be trusted (no checksum to check), made durable, and its offset returned.
    func abort(_ token: UInt64) -> Int64? {
        state.withLock { state -> Int64? in
            guard state.owner == token, !state.closed else { return nil }
            state.owner = nil
            guard state.chunkDigest == nil else {
                try? Self.rollBack(&state)
                return nil
            }
            return try? Self.makeDurable(&state)
        }
    }

    /// The SHA-256 of the durable bytes.
    func durableDigest() -> [UInt8] {
        state.withLock { $0.durableDigest.copy().finish() }
    }

    /// Stops every writer and closes the file (finished, deleted or expired).
    func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            state.owner = nil
            Glibc.close(state.fd)
        }
    }

    private static func makeDurable(_ state: inout State) throws(ServiceError) -> Int64 {
        guard fsync(state.fd) == 0 else {
            let error = BlobStore.failure("fsync", errno)
            try? rollBack(&state)
            throw error
        }
        state.durableOffset = state.liveOffset
        state.durableDigest = state.liveDigest.copy()
        state.writebackStarted = state.liveOffset
        return state.durableOffset
    }

    /// Back to the durable state: the file cut at the durable offset, the running digest
    /// restored from its checkpoint.
    private static func rollBack(_ state: inout State) throws(ServiceError) {
        guard state.liveOffset != state.durableOffset else { return }
        guard ftruncate(state.fd, off_t(state.durableOffset)) == 0 else { throw BlobStore.failure("ftruncate", errno) }
        state.liveOffset = state.durableOffset
        state.liveDigest = state.durableDigest.copy()
        state.writebackStarted = state.durableOffset
    }
}

/// The sessions of uploads being written, by key. One per upload across all connections.
final class UploadSessions: Sendable {
    private let sessions = Mutex<[BlobKey: UploadSession]>([:])

    /// The upload's session, opened from its partial file when it is not live yet (after a
    /// restart: the one time its bytes are hashed again).
    func session(_ key: BlobKey, durableOffset: Int64, blobs: BlobStore) throws(ServiceError) -> UploadSession {
        try sessions.withLock { (sessions) throws(ServiceError) -> UploadSession in
            if let session = sessions[key] { return session }
            let session = try UploadSession(key: key, fd: try blobs.openPartial(key), durableOffset: durableOffset)
            sessions[key] = session
            return session
        }
    }

    /// Ends an upload's session: its writers stop, its file closes.
    func end(_ key: BlobKey) {
        sessions.withLock { $0.removeValue(forKey: key) }?.close()
    }
}
