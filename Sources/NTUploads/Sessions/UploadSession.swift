import NTCoordination
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
#if canImport(Glibc)
import NTSQLKit
import Glibc
#endif
import NTThreadPools
import CNTLinux
import NTHashing
import Synchronization

/// The live state of one resumable upload's partial file, shared by the PATCHes that write
/// it. What is durable (in the store, and the offset the database records) is kept apart from what
/// the PATCH in progress has written since, with a running SHA-256 for each, so that:
/// - a finished PATCH makes its bytes durable without hashing anything again;
/// - a newer PATCH takes over at once (tus: nobody waits on a stale lock) by rolling the
///   partial file back to the durable state, and the older PATCH stops on its next write;
/// - a checksum mismatch drops just that PATCH's bytes.
///
/// Every operation on the bytes (write, hash, rollback, making durable, close) runs on the session's serial
/// lane of the I/O pool, so they never interleave; the lock guards only the bookkeeping that
/// others read (who may write, the durable offset), never a write, a hash or a flush.
final class UploadSession: Sendable {
    let key: BlobKey
    private let lane: SerialLane
    private let file: FileState
    private let bookkeeping: Mutex<Bookkeeping>
    /// `uploadDurableStepBytes`: a long PATCH is made durable every this many bytes (0: never
    /// before its end).
    private let durableStep: Int64
    /// Told each durable step's offset, to record it for other daemons (see `UploadSessions`).
    private let stepped: @Sendable (UploadSession, Int64) -> Void

    private struct Bookkeeping {
        /// The PATCH allowed to write; another one's writes fail.
        var owner: UInt64?
        var durableOffset: Int64
        var closed = false
        /// Why the writer was stopped, when not by a newer PATCH (`stopWriter`).
        var stopped: ServiceError?
    }

    /// Who waits for the writer to end (`writerEnded`).
    private let writerGone = Waiters()

    /// The partial bytes and their digests: touched only by jobs on the lane, one at a time.
    private final class FileState: @unchecked Sendable {
        let blob: any PartialBlob
        var durableOffset: Int64
        var durableDigest: StreamingDigest
        var liveOffset: Int64
        var liveDigest: StreamingDigest
        /// The digest of the current PATCH's bytes, for its Upload-Checksum.
        var chunkDigest: StreamingDigest?
        /// Whether the current PATCH keeps its bytes in durable steps as it goes.
        var stepping = true
        /// Until the session ends (finished, deleted, expired).
        var isOpen = true

        init(blob: any PartialBlob) {
            self.blob = blob
            durableOffset = blob.openedOffset
            durableDigest = blob.openedDigest.copy()
            liveOffset = blob.openedOffset
            liveDigest = blob.openedDigest
        }

        deinit { blob.park() }

        func write(_ batch: [some ByteBuffer], last: Bool) throws {
            guard isOpen else { throw ServiceError(.notFound, "the upload has ended") }
            try blob.write(batch, at: liveOffset, last: last)
        }

        func park() { blob.park() }

        /// Back to the durable state: the bytes past the durable offset forgotten (a bucket's
        /// buffer cut; a partial file's are written over, its mark says where they end), the
        /// running digest restored from its checkpoint. Always asked of the blob, even with
        /// nothing written since: a write that failed half-way may have left bytes (or a
        /// bucket's buffer) past the live offset.
        func rollBack() throws(StorageError) {
            try blob.truncate(to: durableOffset)
            liveOffset = durableOffset
            liveDigest = durableDigest.copy()
        }

        func makeDurable() throws(StorageError) -> Int64 {
            do {
                try blob.makeDurable(upTo: liveOffset, digest: liveDigest)
            } catch {
                try? rollBack()
                throw error
            }
            durableOffset = liveOffset
            durableDigest = liveDigest.copy()
            return durableOffset
        }
    }

    private static let tokens = Atomic<UInt64>(0)

    /// Opens the session of an upload on its partial bytes (opened by the store at the
    /// database's offset: bytes past it were never acknowledged and are gone, and the ones
    /// before are hashed, once). Bytes fewer than that offset (lost in a crash between
    /// finishing and committing) are never made up: the session continues from what there is
    /// (`durableOffset` says so).
    init(key: BlobKey, blob: any PartialBlob, lane: SerialLane, durableStep: Int64, stepped: @escaping @Sendable (UploadSession, Int64) -> Void) {
        self.key = key
        self.lane = lane
        self.durableStep = durableStep
        self.stepped = stepped
        file = FileState(blob: blob)
        bookkeeping = Mutex(Bookkeeping(durableOffset: blob.openedOffset))
    }

    /// What is durable and may be recorded.
    var durableOffset: Int64 { bookkeeping.withLock { $0.durableOffset } }

    /// The durable offset once the writes queued before this call are done: a commit under
    /// way records its offset while its bytes are flushed, so the row may run ahead of
    /// `durableOffset` until that flush ends.
    func settledDurableOffset() async -> Int64 {
        (try? await lane.run { [file] in file.durableOffset }) ?? durableOffset
    }

    /// A request's turn as the upload's writer: its token, and the durable offset it must
    /// continue from.
    struct Claim: Sendable {
        let token: UInt64
        let offset: Int64
    }

    /// Runs `body` as the writer (`claim`). A claim the body did not spend (by `commit` or
    /// `abort`, through `receive`'s caller), because it was refused before it wrote, is given
    /// up when the body returns or throws: nobody releases a claim by hand.
    func withClaim<T>(checksum algorithm: DigestAlgorithm?, keepingLive: Bool = false, stepping: Bool = true,
                      _ body: (Claim) async throws -> T) async throws -> T {
        let claim = try await claim(checksum: algorithm, keepingLive: keepingLive, stepping: stepping)
        defer { release(claim.token) }
        return try await body(claim)
    }

    /// Makes the caller the writer, stopping any older PATCH; returns its claim. The older PATCH's bytes not yet durable are cut,
    /// or with `keepingLive` kept (made durable) when no checksum must vouch for them: the
    /// IETF draft asks a server to keep "as much of the request content … as possible" of a
    /// transfer a newer request ends.
    /// `stepping`: the claimant's long body is made durable every `durableStep` bytes (so
    /// that another daemon taking over continues from there); without, only at its end.
    private func claim(checksum algorithm: DigestAlgorithm?, keepingLive: Bool, stepping: Bool) async throws -> Claim {
        let token = Self.tokens.wrappingAdd(1, ordering: .relaxed).newValue
        try bookkeeping.withLock { (state) throws(ServiceError) in
            guard !state.closed else { throw state.stopped ?? ServiceError.notFound("upload", key.id) }
            state.owner = token
        }
        // After any write the older PATCH has queued: those fail, or land and are forgotten
        // here. In place when none is (the common case: no hop before the body).
        let offset = try await lane.runHereWhenIdle { [self, file, key] () throws -> Int64 in
            guard file.isOpen else { throw ServiceError.notFound("upload", key.id) }
            if keepingLive, file.chunkDigest == nil, file.liveOffset > file.durableOffset {
                _ = try durable()
            } else {
                try file.rollBack()
            }
            file.chunkDigest = algorithm.map(StreamingDigest.init)
            file.stepping = stepping
            return file.durableOffset
        }
        return Claim(token: token, offset: offset)
    }

    /// Gives up a claim that is still the writer (one refused before it wrote, or a write that
    /// failed); one spent, or taken over by a newer claim, is no longer this one's to give up.
    private func release(_ token: UInt64) {
        if releaseOwner(token) { lane.submit { [file] in file.park() } }
    }

    @discardableResult
    private func releaseOwner(_ token: UInt64) -> Bool {
        let released = bookkeeping.withLock { state -> Bool in
            guard state.owner == token else { return false }
            state.owner = nil
            return true
        }
        if released { writerGone.signal() }
        return released
    }

    /// Whether a request writes the upload now.
    var isWritten: Bool { bookkeeping.withLock { $0.owner != nil && !$0.closed } }

    /// Returns once no request writes the upload, or after `milliseconds`: an offset
    /// retrieval lets a transfer whose client went away end by itself first (its last bytes
    /// may still be on their way through the server), so that they are kept.
    func writerEnded(within milliseconds: Int) async {
        await writerGone.awaitSignal(upTo: milliseconds) { bookkeeping.withLock { $0.owner == nil || $0.closed } }
    }

    /// Appends the claimant's body, batch by batch on the lane as it arrives (413 past `room`
    /// bytes, the rest of `length`), then commits it in the job of the last batch: checks its
    /// checksum, makes its bytes durable, and returns the new durable offset. A mismatch drops
    /// the bytes (460). A body that ends early throws why, nothing committed (`abort` says
    /// what is kept).
    ///
    /// `record`, when given, records the offset the bytes reach while they are made durable,
    /// not after: a PATCH waits for one disk flush and one commit side by side, not in turn
    /// (a commit without a flush of its own where the partial bytes keep their offset).
    /// The row may so run ahead of the durable bytes, by this PATCH only and until it answers:
    /// an upload is resumed from the lesser of its row and its file (`Uploads.liveSession`),
    /// and every PATCH must name the session's durable offset, so an offset read meanwhile is
    /// at worst a 409 to its client, never a gap. When the flush fails, the durable offset is
    /// recorded again before the failure is thrown.
    func receive(_ body: some ByteStream, _ token: UInt64, room: Int64, length: Int64, expected checksum: [UInt8]?,
                 recordingAlongside record: (@Sendable (Int64) async throws -> Void)? = nil) async throws -> Int64 {
        let received = Mutex<Int64>(0)
        let recording = Mutex<Task<Void, any Error>?>(nil)
        do {
            let offset = try await body.drain(on: lane, { [self] batch, last in
                let total = received.withLock { total in
                    total += batch.reduce(0) { $0 + Int64($1.count) }
                    return total
                }
                guard total <= room else { throw ServiceError(.payloadTooLarge, "the body goes past Upload-Length \(length)") }
                try append(token, batch, last: last)
            }, then: { [self] in
                try commit(token, expected: checksum) { reached in
                    if let record { recording.withLock { $0 = Task { try await record(reached) } } }
                }
            })
            try await recording.withLock { $0 }?.value
            return offset
        } catch {
            guard let started = recording.withLock({ $0 }), let record else { throw error }
            // The flush failed (the recording may have landed): the row back to what is durable.
            if (try? await started.value) != nil { try await record(durableOffset) }
            throw error
        }
    }

    /// On the lane: appends the next batch of the claimant's body (`last`: its last).
    private func append(_ token: UInt64, _ batch: [some ByteBuffer], last: Bool) throws {
        try requireOwner(token)
        do {
            try file.write(batch, last: last)
        } catch {
            try? file.rollBack()
            release(token)
            throw error
        }
        for chunk in batch {
            chunk.withUnsafeBytes { file.liveDigest.update($0) }
            chunk.withUnsafeBytes { file.chunkDigest?.update($0) }
            file.liveOffset += Int64(chunk.count)
        }
        // A long PATCH keeps what it has as it goes: a newer PATCH taking over (from a
        // connection that died without the server seeing it) continues from here, not from
        // where this one began. Not while a checksum must first vouch for the whole body.
        if durableStep > 0, file.stepping, file.chunkDigest == nil, file.liveOffset - file.durableOffset >= durableStep {
            stepped(self, try durable())
        }
    }

    /// On the lane, the claimant's body complete: its checksum checked, its bytes made
    /// durable (`reaching` told the offset they reach first, to record it meanwhile); returns
    /// the new durable offset.
    private func commit(_ token: UInt64, expected checksum: [UInt8]?, reaching: (Int64) -> Void) throws -> Int64 {
        defer { file.park() }
        try requireOwner(token)
        releaseOwner(token)
        if let checksum, let digest = file.chunkDigest?.finish(), !constantTimeEquals(digest, checksum) {
            try file.rollBack()
            throw ServiceError(.checksumMismatch, "the PATCH body does not match its Upload-Checksum; it was discarded")
        }
        reaching(file.liveOffset)
        return try durable()
    }

    /// The claimant's connection ended before its body did: what arrived is kept when it can
    /// be trusted (no checksum to check), made durable, and its offset returned.
    func abort(_ token: UInt64) async -> Int64? {
        try? await lane.run { [self] () throws -> Int64? in
            defer { file.park() }
            guard (try? requireOwner(token)) != nil else { return nil }
            // Let go once what is kept is durable: who waits for the writer to end
            // (`writerEnded`) then reads the offset it leaves.
            defer { releaseOwner(token) }
            guard file.chunkDigest == nil else {
                try? file.rollBack()
                return nil
            }
            return try durable()
        }
    }

    /// The SHA-256 of the durable bytes.
    func durableDigest() async throws -> [UInt8] {
        try await lane.run { [file] in file.durableDigest.copy().finish() }
    }

    /// `stop`, returning once the writes queued before it are done.
    func stopAndWait(because reason: ServiceError) async {
        stop(because: reason)
        _ = try? await lane.run {}
    }

    /// Stops the writer for `reason` (its grant was revoked, another daemon took the upload
    /// over), and closes the session: its next write or claim fails with `reason`, and a new
    /// session reads the file at the offset recorded.
    func stop(because reason: ServiceError) {
        bookkeeping.withLock { $0.stopped = reason }
        close()
    }

    /// Stops every writer and closes the file (finished, deleted or expired).
    func close() {
        bookkeeping.withLock { state in
            state.closed = true
            state.owner = nil
        }
        writerGone.signal()
        lane.submit { [file] in
            file.isOpen = false
            file.park()
        }
    }

    /// On the lane: fails unless `token` may still write.
    private func requireOwner(_ token: UInt64) throws(ServiceError) {
        let (allowed, stopped) = bookkeeping.withLock { ($0.owner == token && !$0.closed, $0.stopped) }
        if let stopped { throw stopped }
        guard allowed, file.isOpen else { throw ServiceError.takenOver(key.id) }
    }

    /// On the lane: the bytes made durable, and the new durable offset published.
    private func durable() throws(StorageError) -> Int64 {
        let offset = try file.makeDurable()
        bookkeeping.withLock { $0.durableOffset = offset }
        return offset
    }
}

/// The sessions of uploads being written, by key: one per upload across all connections,
/// opened once however many requests ask at the same moment (the first opens it on the I/O
/// pool, the others wait for it), and never under the lock.
package final class UploadSessions: Sendable {
    private enum Entry {
        case opening(waiters: [CheckedContinuation<UploadSession?, any Error>], ended: Bool)
        case open(UploadSession)
    }

    private let entries = Mutex<[BlobKey: Entry]>([:])
    private let blobs: any BlobStore
    private let locker: any Locker

    private let durableStep: Int64
    /// Records a durable step's offset; the refusal when the upload takes no more bytes.
    private let record: @Sendable (BlobKey, Int64) async -> ServiceError?
    /// The recording of each upload's latest durable step, each after the one before: a
    /// daemon giving an upload up waits for them, so the next one reads the row they leave.
    private let recordings = StepRecordings()

    /// `record`: records the offset of each durable step of a long PATCH (the step's bytes
    /// are in the store); recorded, every daemon reports them (a HEAD on another daemon reads
    /// the row). A step it refuses (nil: recorded) stops the PATCH with that refusal.
    package init(blobs: any BlobStore, locker: any Locker, durableStep: Int, record: @escaping @Sendable (BlobKey, Int64) async -> ServiceError?) {
        self.blobs = blobs
        self.locker = locker
        self.durableStep = Int64(durableStep)
        self.record = record
    }

    /// A durable step of `session`'s writer, recorded after the steps before it.
    private func stepped(_ session: UploadSession, _ offset: Int64) {
        let (blobs, record, key) = (self.blobs, self.record, session.key)
        recordings.tasks.withLock { tasks in
            let previous = tasks[key]
            tasks[key] = Task(executorPreference: blobs.io) { [weak self] in
                await previous?.value
                guard let refusal = await record(key, offset) else { return }
                session.stop(because: refusal)
                self?.forget(session)
            }
        }
    }

    /// Lets go of `session` when it is still the upload's (the next request opens another).
    private func forget(_ session: UploadSession) {
        entries.withLock { entries in
            if case .open(let current) = entries[session.key], current === session { entries[session.key] = nil }
        }
    }

    /// Runs `body` holding the upload's finishing lock (this daemon's: its sessions are in its
    /// memory): held while an upload's session is looked up against its row, and while it
    /// finishes, so that no session opens on a file that finishing is removing.
    package func finishing<T>(_ key: BlobKey, _ body: () async throws -> T) async throws -> T {
        try await LockOrder.entering(.uploadFinishing) {
            try await locker.withLocks([LockName("finishing/\(key.tenant)/\(key.id)", reach: .daemon)], wait: .untilFree, body)
        }
    }

    final class StepRecordings: Sendable {
        let tasks = Mutex<[BlobKey: Task<Void, Never>]>([:])
    }

    /// The upload's session, opened from its partial file when it is not live yet (after a
    /// restart: the one time its bytes are hashed again). `capacity`: the most bytes the
    /// upload may hold.
    func session(_ key: BlobKey, recordedOffset: Int64, capacity: Int64) async throws -> UploadSession {
        enum Role {
            case ready(UploadSession)
            case waiting
            case opening
        }
        let role = entries.withLock { entries -> Role in
            switch entries[key] {
            case .open(let session): return .ready(session)
            case .opening: return .waiting
            case nil:
                entries[key] = .opening(waiters: [], ended: false)
                return .opening
            }
        }
        switch role {
        case .ready(let session):
            return session
        case .waiting:
            let joined: UploadSession? = try await withCheckedThrowingContinuation { continuation in
                let now = entries.withLock { entries -> Result<UploadSession?, any Error>? in
                    switch entries[key] {
                    case .open(let session): return .success(session)
                    case .opening(var waiters, let ended):
                        waiters.append(continuation)
                        entries[key] = .opening(waiters: waiters, ended: ended)
                        return nil
                    case nil: return .success(nil) // the opening failed meanwhile: try again
                    }
                }
                if let now { continuation.resume(with: now) }
            }
            if let joined { return joined }
            return try await session(key, recordedOffset: recordedOffset, capacity: capacity)
        case .opening:
            let (blobs, durableStep) = (self.blobs, self.durableStep)
            var outcome: Result<UploadSession, any Error>
            do {
                let blob = try await blobs.openPartial(key, recordedOffset: recordedOffset, capacity: capacity)
                outcome = .success(UploadSession(key: key, blob: blob, lane: SerialLane(pool: blobs.io), durableStep: durableStep) { [weak self] session, offset in
                    self?.stepped(session, offset)
                })
            } catch {
                outcome = .failure(error)
            }
            let (waiters, ended) = entries.withLock { entries -> ([CheckedContinuation<UploadSession?, any Error>], Bool) in
                guard case .opening(let waiters, let ended) = entries[key] else { return ([], false) }
                if case .success(let session) = outcome, !ended {
                    entries[key] = .open(session)
                } else {
                    entries[key] = nil
                }
                return (waiters, ended)
            }
            if ended, case .success(let session) = outcome {
                session.close()
                outcome = .failure(ServiceError.notFound("upload", key.id))
            }
            for waiter in waiters { waiter.resume(with: outcome.map { Optional($0) }) }
            return try outcome.get()
        }
    }

    /// `end`, returning once the session's writes are done and its durable steps recorded
    /// (another daemon takes the upload, and reads the row they leave).
    package func endAndWait(_ key: BlobKey) async {
        let session = entries.withLock { entries -> UploadSession? in
            guard case .open(let session) = entries[key] else { return nil }
            entries[key] = nil
            return session
        }
        // A request of this daemon still on it is refused as an older request is (409).
        await session?.stopAndWait(because: .takenOver(key.id))
        await recordings.tasks.withLock { $0.removeValue(forKey: key) }?.value
    }

    /// Ends an upload's session: its writers stop, its file closes.
    func end(_ key: BlobKey) {
        _ = recordings.tasks.withLock { $0.removeValue(forKey: key) } // they finish by themselves
        let session = entries.withLock { entries -> UploadSession? in
            switch entries[key] {
            case .open(let session):
                entries[key] = nil
                return session
            case .opening(let waiters, _):
                entries[key] = .opening(waiters: waiters, ended: true)
                return nil
            case nil:
                return nil
            }
        }
        session?.close()
    }
}
