import Foundation
import NTAPIModel
import NTHashing
import NTLogging
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// Resumable uploads, whichever protocol carries them (tus, the IETF draft): an upload's row,
/// partial file and session, which daemon writes it, its offset, its bytes appended and made
/// durable, and its crash-safe finish into the panorama a one-shot upload would have made.
/// Written against the service's ports (records, blobs, the locker); knows no HTTP: the
/// routes parse a request into these calls and write their answers.
package struct Uploads: Sendable {
    package let records: Records
    package let blobs: any BlobStore
    package let clock: any ServiceClock
    package let crashPoints: CrashPoints
    package let logger: Logger
    package let outages: OutageLog
    package let settings: UploadSettings
    /// Where a finished upload's file becomes its panorama, in the panorama's turn.
    package let panoramas: Panoramas
    package let sessions: UploadSessions
    /// Which daemon writes an upload, when several share the database and blob folder (the
    /// composition's choice: no default, so no caller can leave cross-daemon writers out).
    package let ownership: UploadOwnership
    /// Each upload's URL, its own credential.
    package let capabilities: UploadCapabilities

    package init(records: Records, blobs: any BlobStore, clock: any ServiceClock, crashPoints: CrashPoints, logger: Logger, outages: OutageLog, settings: UploadSettings, panoramas: Panoramas, sessions: UploadSessions, ownership: UploadOwnership, capabilities: UploadCapabilities) {
        self.records = records
        self.blobs = blobs
        self.clock = clock
        self.crashPoints = crashPoints
        self.logger = logger
        self.outages = outages
        self.settings = settings
        self.panoramas = panoramas
        self.sessions = sessions
        self.ownership = ownership
        self.capabilities = capabilities
    }

    var expiry: Int64 { settings.expirySeconds }
    var now: Int64 { clock.unixSeconds }

    /// Upload `id` of the tenant, unexpired.
    func upload(_ tenant: Int64, _ id: String) async throws -> UploadRecord {
        let now = self.now
        guard let upload = try await records.readOne({ try await UploadStore.upload($0, tenant, id) }), upload.expiresAt > now else {
            throw ServiceError.notFound("upload", id)
        }
        return upload
    }

    /// The URL of an upload (its creation's `Location`).
    func location(_ upload: UploadRecord, _ tenant: Int64) -> String {
        capabilities.location(upload.id, tenant: tenant)
    }

    func partialKey(_ upload: UploadRecord, _ tenant: Int64) -> BlobKey {
        BlobKey(tenant: tenant, kind: .upload, id: upload.id)
    }

    /// What a tus creation made: the panorama stored already (its declared digest's re-send),
    /// or the upload, at the offset it holds.
    enum Creation {
        case stored(PanoramaRecord)
        /// New, or the open one of a creation sent again (its 201 was lost).
        case upload(UploadRecord, offset: Int64)
    }

    /// A tus creation, idempotent per panorama, optionally with the first bytes (`body`).
    func create(_ tenant: Int64, _ wanted: UploadRequest, body: (some ByteStream)?) async throws -> Creation {
        // Stored already: answered as a one-shot re-send would, when the digest is declared.
        if let resent = try await panoramas.resent(tenant, wanted.creation) { return .stored(resent) }
        // A creation sent again (its 201 was lost): the same upload, at the offset it holds.
        let now = self.now
        if let open = try await records.readOne({ try await UploadStore.receiving($0, tenant, panoramaId: wanted.panoramaId) }), open.expiresAt > now {
            return try await sentAgain(open, wanted, tenant)
        }
        try await panoramas.checkPlace(tenant, wanted.creation)
        // The partial file exists, durably, before the row that names it.
        let id = Identifier.make()
        let key = BlobKey(tenant: tenant, kind: .upload, id: id)
        // Held from before the row exists: once it does, another daemon asked for the upload
        // (a HEAD, a creation sent again) must not open its file while this one writes it.
        return try await owning(key) { owner in
            try await createOwned(key: key, wanted: wanted, body: body, now: now, owner: owner)
        }
    }

    private func createOwned(key: BlobKey, wanted: UploadRequest, body: (some ByteStream)?, now: Int64, owner: UInt64) async throws -> Creation {
        let tenant = key.tenant
        let upload: UploadRecord
        switch try await open(key, wanted, now: now, replacingOpen: false) {
        case .created(let record):
            upload = record
        case .sentAgain(let open):
            return try await sentAgain(open, wanted, tenant)
        }
        guard let body, upload.length > 0 else {
            // Nothing to send: complete at once.
            if upload.length == 0 { _ = try await finishIfComplete(upload, tenant, offset: 0, owner: owner) }
            return .upload(upload, offset: 0)
        }
        let session = try await sessions.session(key, recordedOffset: 0, capacity: upload.length)
        let offset = try await session.withClaim(checksum: nil) { claim in
            try await receive(body, upload, tenant, session, token: claim.token, checksum: nil, owner: owner)
        }
        return .upload(upload, offset: offset)
    }

    /// What opening an upload found.
    enum Opening {
        case created(UploadRecord)
        /// The panorama has an unfinished upload already (tus: a creation sent again).
        case sentAgain(UploadRecord)
    }

    /// Opens upload `key` for `wanted`: its empty partial file, durably, then its row, within
    /// the tenant's quota. An unfinished upload of the same panorama is found
    /// (`.sentAgain`), or, with `replacingOpen`, ended and replaced (a new creation of the
    /// draft starts the panorama's bytes again). The caller owns `key`.
    func open(_ key: BlobKey, _ wanted: UploadRequest, now: Int64, replacingOpen: Bool) async throws -> Opening {
        let tenant = key.tenant
        _ = try await sessions.session(key, recordedOffset: 0, capacity: wanted.length)
        let expiresAt = now + expiry
        let (maxCount, maxBytes) = (settings.maxUnfinishedPerTenant, settings.maxUnfinishedBytesPerTenant)
        let creation: Opened
        do {
            creation = try await records.write { db -> Opened in
                var stale: UploadRecord?
                if let open = try await UploadStore.receiving(db, tenant, panoramaId: wanted.panoramaId) {
                    // Created since the read above, by a request still in flight: that one.
                    if open.expiresAt > now && !replacingOpen { return .sentAgain(open) }
                    // Only its own principal starts a live upload's bytes again: another's stays
                    // whole (a grant naming a panorama id must not end the tenant's upload).
                    if open.expiresAt > now, open.grantId != wanted.grantId { throw Self.notARepeat(wanted) }
                    // Expired leftovers (or the upload a new draft creation replaces) go first.
                    _ = try await UploadStore.delete(db, tenant, open.id)
                    stale = open
                }
                // The tenant's quota, checked in the transaction that would exceed it.
                let held = try await UploadStore.unfinished(db, tenant, now: now)
                guard held.count < maxCount else {
                    throw ServiceError(.insufficientStorage, "this tenant has \(held.count) unfinished uploads, the most it may have: finish or delete some first")
                }
                guard held.bytes + wanted.length <= maxBytes else {
                    throw ServiceError(.insufficientStorage, "this tenant's unfinished uploads reserve \(held.bytes) bytes; \(wanted.length) more would pass its \(maxBytes)")
                }
                return .created(try await UploadStore.create(db, tenant, id: key.id, wanted, expiresAt: expiresAt, at: clock.now()), replacing: stale)
            }
        } catch {
            sessions.end(key)
            await blobs.remove(key)
            throw error
        }
        switch creation {
        case .created(let record, let replacing):
            if let replacing {
                let staleKey = partialKey(replacing, tenant)
                sessions.end(staleKey)
                await blobs.remove(staleKey)
            }
            return .created(record)
        case .sentAgain(let open):
            sessions.end(key)
            await blobs.remove(key)
            return .sentAgain(open)
        }
    }

    /// What a creation's transaction found.
    private enum Opened {
        /// A new upload, in place of an expired one under the same panorama.
        case created(UploadRecord, replacing: UploadRecord?)
        /// The panorama has an unfinished upload already.
        case sentAgain(UploadRecord)
    }


    /// A creation whose panorama has an unfinished upload: that upload, at the offset it holds
    /// (its body, if any, is not stored: the client goes on from that offset).
    private func sentAgain(_ open: UploadRecord, _ wanted: UploadRequest, _ tenant: Int64) async throws -> Creation {
        guard open.isRepeated(by: wanted) else { throw Self.notARepeat(wanted) }
        return .upload(open, offset: try await reportedOffset(open, tenant))
    }

    /// A creation for a panorama with a live upload that it does not repeat: nothing of that
    /// upload is shown or removed.
    private static func notARepeat(_ wanted: UploadRequest) -> ServiceError {
        .conflict("panorama \(wanted.panoramaId) has an unfinished upload that this creation does not repeat (another credential, floor, "
                  + "length or metadata): resume that one, or delete it first")
    }

    /// Upload `key` as it is now, unexpired (a request may have finished it since it was last
    /// read): finished (no session), or receiving, with its live session and durable offset.
    /// Under the upload's lock, so that no session is opened on a file that finishing is
    /// removing; and only while `owner` still makes this daemon the upload's writer (another
    /// daemon's newer request may have taken it since: its writer must be the only one).
    func current(_ key: BlobKey, owner: UInt64) async throws -> (record: UploadRecord, session: UploadSession?, offset: Int64) {
        try await sessions.finishing(key) {
            guard ownership.holds(key, owner) else { throw ServiceError.takenOver(key.id) }
            let now = self.now
            guard let record = try await records.readOne({ try await UploadStore.upload($0, key.tenant, key.id) }), record.expiresAt > now else {
                throw ServiceError.notFound("upload", key.id)
            }
            if record.finished { return (record, nil, record.length) }
            let (session, offset) = try await liveSession(record, key.tenant)
            return (record, session, offset)
        }
    }

    /// The offset a client resumes from. An upload whose file holds every byte but which did
    /// not become its panorama (the server crashed while finishing it) finishes now.
    /// A PATCH still writing (its client gone, its last bytes still on their way through the
    /// server) is given `uploadTakeoverGraceMs` to end first: the offset told is the one it
    /// leaves, not one its end moves on right after (the client's PATCH from there a 409).
    private func resumeOffset(_ upload: UploadRecord, _ tenant: Int64, owner: UInt64) async throws -> Int64 {
        let key = partialKey(upload, tenant)
        var now = try await current(key, owner: owner)
        if let session = now.session, session.isWritten {
            await transferEnded(session)
            now = try await current(key, owner: owner)
        }
        guard now.session != nil else { return now.offset }
        let offset = try await caughtUp(now.record, tenant, offset: now.offset, owner: owner)
        _ = try await finishIfComplete(now.record, tenant, offset: offset, owner: owner)
        return offset
    }

    /// The offset to tell of an upload whose session holds `offset`, recorded first: another
    /// daemon asked next answers from the row, and must not answer less (a PATCH that ended
    /// records it too, but perhaps after this answer; a lazy record a crash took back never
    /// will). An upload whose grant was revoked takes no bytes past its row's: those a
    /// transfer still made durable meanwhile do not count.
    func caughtUp(_ upload: UploadRecord, _ tenant: Int64, offset: Int64, owner: UInt64) async throws -> Int64 {
        guard offset > upload.offset else { return offset }
        do {
            try await record(upload, tenant, offset: offset, owner: owner)
            return offset
        } catch let error as ServiceError where error == .uploadGrantRevoked {
            return upload.offset
        }
    }

    /// An offset retrieval lets a transfer still writing the upload (its client gone, its last
    /// bytes still on their way through the server) end by itself first, for up to
    /// `uploadTakeoverGraceMs`: the offset told is the one it leaves.
    func transferEnded(_ session: UploadSession) async {
        logger.debug("an offset retrieval waits for the transfer still writing the upload", ["upload": session.key.id])
        await session.writerEnded(within: settings.takeoverGraceMs)
    }

    /// `retrieval`, an offset retrieval as the upload's writer (`owner`). When another daemon's
    /// newer request takes the upload over meanwhile (this daemon's session of it ends under
    /// the retrieval), that request writes it now: the answer is `takenOver` of the upload and
    /// its offset as its row records them, which this daemon's writes are in before it lets go.
    func retrieving<T>(_ upload: UploadRecord, _ tenant: Int64, owner: UInt64, _ retrieval: () async throws -> T,
                       takenOver: (UploadRecord, Int64) -> T) async throws -> T {
        do {
            return try await retrieval()
        } catch {
            guard try await !stillWriter(partialKey(upload, tenant), owner) else { throw error }
            let recorded = try await self.upload(tenant, upload.id)
            return takenOver(recorded, recorded.finished ? recorded.length : recorded.offset)
        }
    }

    /// Whether `owner` still makes this daemon the upload's writer, once a letting go under
    /// way is done (it holds the finishing lock from the session's end to the hold's).
    private func stillWriter(_ key: BlobKey, _ owner: UInt64) async throws -> Bool {
        try await sessions.finishing(key) { ownership.holds(key, owner) }
    }

    /// `resumeOffset` when no other daemon writes the upload; while one does, the fsynced
    /// offset it recorded, and its partial file is not touched (a session opened here would cut
    /// the file to the row's offset under the writer).
    func reportedOffset(_ upload: UploadRecord, _ tenant: Int64) async throws -> Int64 {
        let key = partialKey(upload, tenant)
        return try await LockOrder.entering(.uploadOwnership) {
            guard let token = try await ownership.tryAcquire(key) else { return upload.offset }
            do {
                let offset = try await retrieving(upload, tenant, owner: token, { try await resumeOffset(upload, tenant, owner: token) }) { $1 }
                await ownership.release(key, token)
                return offset
            } catch {
                await ownership.release(key, token)
                throw error
            }
        }
    }

    /// The upload's live session and its durable offset (callers hold the upload's lock).
    /// When its partial file holds less than the row records (a crash cut a PATCH whose row
    /// was recorded while its bytes were flushed, or a file system broke its fsync promise),
    /// the row goes back to what the file holds: the client resends from there. A row behind
    /// the file (its lazy record taken back by a crash) catches up when the offset is next
    /// recorded or told (`resumeOffset`).
    private func liveSession(_ upload: UploadRecord, _ tenant: Int64) async throws -> (session: UploadSession, offset: Int64) {
        var session = try await sessions.session(partialKey(upload, tenant), recordedOffset: upload.offset, capacity: upload.length)
        // Ahead of the flush a commit of this daemon's still runs (it recorded the offset
        // alongside), or ahead of what this session holds.
        if upload.offset > session.durableOffset, upload.offset > (await session.settledDurableOffset()) {
            // Another daemon on the same database and blob folder took the upload further since
            // this one last held it: this session's view of the file is old. It ends (a PATCH of
            // this daemon still writing through it stops, as an older PATCH does), and a new one
            // reads the file as it is now.
            sessions.end(partialKey(upload, tenant))
            session = try await sessions.session(partialKey(upload, tenant), recordedOffset: upload.offset, capacity: upload.length)
        }
        let offset = session.durableOffset
        if offset < upload.offset {
            try await records.write { try await UploadStore.repairOffset($0, tenant, upload.id, offset: offset) }
            logger.warn("an upload's partial file holds less than recorded; it continues from there",
                                ["upload": upload.id, "recorded": String(upload.offset), "held": String(offset)])
        }
        return (session, offset)
    }


    /// Runs `body` as the upload's writer (`UploadOwnership`), with its ownership token.
    func owning<T>(_ key: BlobKey, _ body: (UInt64) async throws -> T) async throws -> T {
        try await LockOrder.entering(.uploadOwnership) {
            let token = try await ownership.acquire(key)
            do {
                let value = try await body(token)
                await ownership.release(key, token)
                return value
            } catch {
                await ownership.release(key, token)
                throw error
            }
        }
    }

    /// A tus PATCH: `body` appended at `offset` (which must be the server's), as the upload's
    /// writer (a newer PATCH wins, on this daemon or, through the upload's lock, on another).
    /// `announced`: the body's length when its sender said it; `hasBody`: whether one was
    /// sent at all. Returns the upload and the offset reached.
    func append(_ tenant: Int64, _ id: String, at offset: Int64, checksum: (DigestAlgorithm, [UInt8])?, announced: Int64?,
                body: some ByteStream, hasBody: Bool) async throws -> (upload: UploadRecord, offset: Int64) {
        let key = BlobKey(tenant: tenant, kind: .upload, id: id)
        return try await owning(key) { owner in
            let (upload, live, _) = try await current(key, owner: owner)
            if let announced, announced > upload.length - offset {
                throw ServiceError(.payloadTooLarge, "the body goes past Upload-Length \(upload.length)")
            }
            guard let session = live else {
                // The client may have missed the last answer: the end again is no error.
                guard offset == upload.length, !hasBody else {
                    throw ServiceError(.offsetMismatch, "upload \(upload.id) is complete at \(upload.length) bytes")
                }
                return (upload, upload.length)
            }
            let reached = try await session.withClaim(checksum: checksum?.0) { claim in
                guard claim.offset == offset else {
                    throw ServiceError(.offsetMismatch, "Upload-Offset is \(offset) but the server has \(claim.offset) bytes")
                }
                return try await receive(body, upload, tenant, session, token: claim.token, checksum: checksum?.1, owner: owner)
            }
            return (upload, reached)
        }
    }

    /// Streams a PATCH body (or a creation's first bytes) into the upload's session, then
    /// makes it durable, records it, and makes the panorama when it was the last byte.
    private func receive(_ body: some ByteStream, _ upload: UploadRecord, _ tenant: Int64, _ session: UploadSession, token: UInt64,
                         checksum: [UInt8]?, owner: UInt64) async throws -> Int64 {
        let offset = try await append(body, upload, tenant, session, token: token, checksum: checksum, room: upload.length - session.durableOffset,
                                      owner: owner)
        _ = try await finishIfComplete(upload, tenant, offset: offset, owner: owner)
        return offset
    }

    /// Streams a body of at most `room` bytes into the upload's session as its claimant
    /// (`token`), makes it durable and records it as the upload's writer (`owner`); returns
    /// the durable offset. `completes` (a draft request that ends the upload): recorded as
    /// complete at that offset, unless a length said before is not reached (the caller refuses
    /// that). A body that ends early (the client went away, a limit, a timeout) keeps what
    /// arrived when no checksum must vouch for it, and throws.
    func append(_ body: some ByteStream, _ upload: UploadRecord, _ tenant: Int64, _ session: UploadSession, token: UInt64, checksum: [UInt8]?,
                room: Int64, completes: Bool = false, owner: UInt64) async throws -> Int64 {
        // A PATCH's offset is recorded while its bytes are flushed; one that completes an
        // upload (the draft's last request) only once they are durable.
        let recordOffset: @Sendable (Int64) async throws -> Void = { offset in try await record(upload, tenant, offset: offset, owner: owner) }
        let offset: Int64
        do {
            offset = try await session.receive(body, token, room: room, length: upload.length, expected: checksum,
                                               recordingAlongside: completes ? nil : recordOffset)
        } catch {
            if let kept = await session.abort(token) {
                do {
                    _ = try await asWriter(upload, tenant, owner) { try await record(upload, tenant, offset: kept) }
                } catch {
                    logger.warn("could not record an interrupted upload's offset", ["upload": upload.id, "error": "\(error)"])
                }
            }
            throw error
        }
        guard completes else { return offset }
        let recorded = try await asWriter(upload, tenant, owner) {
            if !upload.lengthKnown || offset == upload.length {
                guard try await records.write({ try await UploadStore.markComplete($0, tenant, upload.id, offset: offset) }) else {
                    try await refuseIfRevoked(upload.id, tenant)
                    return
                }
            } else {
                try await record(upload, tenant, offset: offset)
            }
        }
        guard recorded else { throw ServiceError.takenOver(upload.id) }
        return offset
    }

    /// Records a durable offset of the upload as its writer (`owner`): 409 once another daemon
    /// took it over (its session reads the row as this one left it when letting go).
    func record(_ upload: UploadRecord, _ tenant: Int64, offset: Int64, owner: UInt64) async throws {
        guard try await asWriter(upload, tenant, owner, { try await record(upload, tenant, offset: offset) }) else { throw ServiceError.takenOver(upload.id) }
    }

    /// Runs `write` (a record of what a transfer reached) only while `owner` still makes this
    /// daemon the upload's writer; false when another daemon took the upload over. Under the
    /// finishing lock, which letting the upload go takes too: the daemon taking it over reads
    /// the row as this one left it, and a record landing after would move it under that
    /// daemon's session.
    private func asWriter(_ upload: UploadRecord, _ tenant: Int64, _ owner: UInt64, _ write: () async throws -> Void) async throws -> Bool {
        let key = partialKey(upload, tenant)
        return try await sessions.finishing(key) {
            guard ownership.holds(key, owner) else { return false }
            try await write()
            return true
        }
    }

    /// Records a durable offset of the upload (401 once its grant is revoked: the bytes are
    /// not acknowledged): lazily where the partial bytes keep their offset themselves, made
    /// durable with them (a PATCH then waits for one flush, its file's, not two).
    private func record(_ upload: UploadRecord, _ tenant: Int64, offset: Int64, durably: Bool = false) async throws {
        let expiresAt = now + expiry
        let lazily = blobs.partialsKeepTheirOffset && !durably
        guard try await records.write(lazily: lazily, { try await UploadStore.setOffset($0, tenant, upload.id, offset: offset, expiresAt: expiresAt) }) else {
            try await refuseIfRevoked(upload.id, tenant)
            return
        }
    }

    /// Records the upload's length, said after its creation (the draft); 401 once its grant is revoked.
    func recordLength(_ upload: UploadRecord, _ tenant: Int64, _ length: Int64) async throws {
        let id = upload.id
        if try await !records.write({ try await UploadStore.recordLength($0, tenant, id, length: length) }) {
            try await refuseIfRevoked(id, tenant)
        }
    }

    /// A record the upload's row refused: 401 when its grant was revoked (`UploadStore.takesBytes`);
    /// otherwise the upload ended meanwhile, which its next step finds.
    func refuseIfRevoked(_ id: String, _ tenant: Int64) async throws {
        if try await records.readOne({ try await GrantStore.uploadRevoked($0, tenant, upload: id) }) == true { throw ServiceError.uploadGrantRevoked }
    }

    /// With the last byte in, the upload becomes the panorama exactly as a one-shot upload
    /// would: the same digest check, the same idempotency, the same file; in place before
    /// the answer. Once per upload: a request that finds it finished meanwhile has nothing to do.
    /// A daemon finishes an upload only as its writer (`owner`): when another daemon took the
    /// upload after its last byte arrived here, this one waits its turn as the writer, once.
    /// Returns the panorama the upload became (nil while bytes are missing or awaited).
    func finishIfComplete(_ upload: UploadRecord, _ tenant: Int64, offset: Int64, owner: UInt64) async throws -> FinishedUpload? {
        guard upload.isComplete(at: offset) else { return nil }
        let key = partialKey(upload, tenant)
        if case .done(let finished) = try await finishingTurn(upload, tenant, key, owner: owner) { return finished }
        return try await owning(key) { owner in
            guard case .done(let finished) = try await finishingTurn(upload, tenant, key, owner: owner) else {
                throw ServiceError(.unavailable, "another daemon keeps taking upload \(upload.id); try again", retryAfterSeconds: 1)
            }
            return finished
        }
    }

    /// What a turn at finishing an upload found.
    private enum FinishingTurn {
        /// Another daemon took the upload since `owner` was its writer.
        case notTheWriter
        /// The panorama the upload became (nil: deleted since it was stored).
        case done(FinishedUpload?)
    }

    /// One turn at finishing, under the upload's finishing lock (no session opens on a file
    /// that finishing is removing).
    private func finishingTurn(_ upload: UploadRecord, _ tenant: Int64, _ key: BlobKey, owner: UInt64) async throws -> FinishingTurn {
        try await sessions.finishing(key) {
            guard ownership.holds(key, owner) else { return .notTheWriter }
            guard let record = try await records.readOne({ try await UploadStore.upload($0, tenant, upload.id) }) else {
                throw ServiceError.notFound("upload", upload.id)
            }
            if !record.finished, let made = try await finish(record, tenant) { return .done(made) }
            // Finished before: the panorama as stored (gone again when it was deleted since).
            return .done(try await records.readOne { try await TourStore.panorama($0, tenant, upload.panoramaId) }.map { FinishedUpload(panorama: $0, created: false) })
        }
    }

    /// The panorama a finished upload became: `created` false when it was a re-send of one
    /// stored already.
    struct FinishedUpload {
        var panorama: PanoramaRecord
        var created: Bool
    }

    /// Crash-safe at every step: the partial file gets the panorama's name too (a durable hard
    /// link), the panorama row and the upload's end commit together, and only then does the
    /// partial name go. A crash before the commit leaves the upload whole at its length (the
    /// panorama name, without a row, is removed at start-up; the next HEAD or PATCH finishes
    /// it); a crash after it, the panorama (a finished upload's partial name is removed at
    /// start-up). A refusal (a digest mismatch, a conflict) ends the upload; a failure of the
    /// server's keeps it, to be finished by the next request. Nil when another daemon finished
    /// it meanwhile.
    private func finish(_ upload: UploadRecord, _ tenant: Int64) async throws -> FinishedUpload? {
        let partial = partialKey(upload, tenant)
        let session = try await liveSession(upload, tenant).session
        let digest = ByteEncoding.hex(try await session.durableDigest())
        let panorama = BlobKey(tenant: tenant, kind: .panorama, id: upload.panoramaId)
        crashPoints.reached(.uploadFinishing)
        let finished: FinishedUpload?
        do {
            if let declared = upload.declaredSHA256, declared != digest {
                throw ServiceError(.digestMismatch, "the upload's sha-256 is \(digest), not the declared \(declared)")
            }
            try PanoramaMediaType.checkContent(upload.contentType, head: try await blobs.head(partial: partial))
            finished = try await panoramas.turns.holding([panorama]) { () -> FinishedUpload? in
                // Finished meanwhile by another daemon (which held the turn first): nothing to do.
                guard try await records.readOne({ try await UploadStore.upload($0, tenant, upload.id) })?.finished == false else { return nil }
                // Finishing cuts the partial file's own record of its offset off: the row's,
                // durable from here on, is what a crash before the commit resumes from.
                if blobs.partialsKeepTheirOffset { try await record(upload, tenant, offset: upload.length, durably: true) }
                switch try await panoramas.place(panorama, by: { try await blobs.finish(partial: partial, length: upload.length, as: panorama) }) {
                case .placed:
                    crashPoints.reached(.uploadLinked)
                    let stored: PanoramaRecord
                    do {
                        stored = try await records.write { db in
                            guard try await UploadStore.takesBytes(db, tenant, upload.id) else { throw ServiceError.uploadGrantRevoked }
                            let stored = try await TourStore.insertPanorama(db, tenant, id: upload.panoramaId, floorId: upload.floorId, roomId: upload.roomId,
                                                                            position: upload.position, contentType: upload.contentType, size: upload.length, sha256: digest,
                                                                            at: clock.now())
                            try await UploadStore.markFinished(db, tenant, upload.id)
                            return stored
                        }
                    } catch {
                        await blobs.remove(panorama) // no file without its row
                        throw error
                    }
                    crashPoints.reached(.uploadCommitted)
                    panoramas.images.stored(tenant, stored)
                    return FinishedUpload(panorama: stored, created: true)
                case .stored(let existing):
                    // Stored meanwhile: the same bytes are a re-send (its bytes were not needed),
                    // others a conflict.
                    _ = try PanoramaUpload.resend(existing, digest: digest)
                    try await records.write { try await UploadStore.markFinished($0, tenant, upload.id) }
                    return FinishedUpload(panorama: existing, created: false)
                }
            }
        } catch let error as ServiceError where !error.isServerFailure && error != .uploadGrantRevoked {
            // Nothing of a refused upload is kept (a revoked grant's stays, unfinished, until it expires).
            _ = try? await records.write { try await UploadStore.delete($0, tenant, upload.id) }
            sessions.end(partial)
            await blobs.remove(partial)
            throw error
        }
        sessions.end(partial)
        await blobs.remove(partial)
        crashPoints.reached(.uploadUnlinked)
        return finished
    }


    /// Ends an upload: its row, its session (a request writing it stops) and its partial file.
    func end(tenant: Int64, id: String) async throws {
        guard try await records.write({ try await UploadStore.delete($0, tenant, id) }) else { throw ServiceError.notFound("upload", id) }
        let key = BlobKey(tenant: tenant, kind: .upload, id: id)
        sessions.end(key)
        await blobs.remove(key)
    }

    /// Removes expired uploads and their partial files; never a panorama.
    package func sweepExpired() async {
        do {
            let keys = try await records.write { try await UploadStore.deleteExpired($0, at: clock.now()) }
            for key in keys { sessions.end(key) }
            await blobs.remove(keys)
            if !keys.isEmpty { logger.info("expired uploads removed", ["count": String(keys.count)]) }
        } catch {
            outages.failed("the upload expiry sweep failed", error)
        }
    }
}
