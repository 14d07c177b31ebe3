#if canImport(Glibc)
import Glibc
import NTSQLKit
#endif
import NTServiceModel
import Foundation
import NTHashing
import NTObjectStorage
import Synchronization
import NTThreadPools

/// Blobs in an S3-compatible bucket (`blobStore: "s3://BUCKET/PREFIX"`), for daemons on
/// several machines: `<tenant>/<kind>/<name>` below the prefix, as in the blob folder.
///
/// A body is received into this daemon's `tmp/` (hashed on the way), each `s3PartBytes` part
/// sent to the bucket as soon as it is there (`StreamedParts`), a body of one part at most as
/// one PUT once whole; the row is committed only after the store answered for the whole
/// object, so a 2xx still means durable. A resumable upload's bytes are objects too, `segments` of
/// `s3PartBytes` (`BucketPartial`), never a multipart upload in progress: a store that forgets
/// those across a restart (rclone) loses nothing acknowledged.
///
/// Reads, previews and tiles are made from local copies named by digest (`LocalCopies`); the
/// previews are kept in the bucket too (`SharedPreviews`). The store away answers 503 with
/// Retry-After; nothing is acknowledged that the store did not keep.
package final class BucketBlobStore: BlobStore {
    package let bucket: ObjectBucket
    package let io: ThreadPool
    package let incoming: IncomingFolder
    let copies: LocalCopies
    /// `s3PartBytes`: a multipart upload's parts, and a resumable upload's segments.
    let partSize: Int64
    let retryAfterSeconds: Int
    /// `s3BackgroundAttempts`: how often `backgroundCalls` are made to a store that is away.
    let backgroundAttempts: Int
    /// `s3PresignedReads` on: the lifetime (`s3PresignedSeconds`) of the URLs reads are sent to.
    private let presignedSeconds: Int?
    /// Set when a call found the store away, cleared by the next that reached it; while set,
    /// the store is probed every `retryAfterSeconds`, so /healthz recovers without traffic.
    private let away = Mutex(StoreAway())

    package var unavailableReason: String? { away.withLock { $0.reason } }
    package var metrics: String { bucket.metrics.render() }

    package func stop() {
        io.stop()
        bucket.stop()
    }

    package init(bucket: ObjectBucket, dataDir: String, io: ThreadPool, partSize: Int, copyBytes: Int64,
         retryAfterSeconds: Int, backgroundAttempts: Int, presignedSeconds: Int?) throws(StorageError) {
        self.bucket = bucket
        self.presignedSeconds = presignedSeconds
        self.io = io
        self.partSize = Int64(partSize)
        self.retryAfterSeconds = retryAfterSeconds
        self.backgroundAttempts = backgroundAttempts
        incoming = IncomingFolder(path: dataDir + "/tmp", io: io, destination: .bucket(partSize: Int64(partSize)))
        copies = LocalCopies(folder: dataDir + "/copies", limitBytes: copyBytes, io: io)
        for directory in [dataDir + "/tmp", dataDir + "/copies"] { try Disk.makeDirectory(directory) }
        copies.removeLeftovers()
    }

    static func name(_ key: BlobKey) -> String {
        "\(key.tenant)/\(key.kind.rawValue)/\(key.id)"
    }

    /// Runs bucket calls on a transfer thread; the store's errors become the API's.
    @discardableResult
    package func calls<T: Sendable>(_ body: @escaping @Sendable (BucketTransfer) throws -> T) async throws -> T {
        let began = away.withLock { $0.findings }
        do {
            let result = try await bucket.run(body)
            away.withLock { $0.reached(since: began) }
            return result
        } catch let error as ObjectStoreError {
            throw serviceError(error, began: began)
        }
    }

    /// Calls no client waits on, each safe to make again (a whole object put): a store that
    /// says it is unavailable (a 5xx, no answer) is asked again after `retryAfterSeconds`, as
    /// clients are told to, `backgroundAttempts` times in all. A client's request is answered
    /// 503 at once instead: the client asks again.
    @discardableResult
    package func backgroundCalls<T: Sendable>(_ body: @escaping @Sendable (BucketTransfer) throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await calls(body)
            } catch let error as StorageError where error.kind == .unavailable && attempt < backgroundAttempts {
                attempt += 1
                try await Task.sleep(for: .seconds(max(1, retryAfterSeconds)))
            }
        }
    }

    /// The API's error for the store's, noting the store away (no answer, or our credentials
    /// refused: a 503 with Retry-After and a degraded /healthz, never a 500). `began`: the
    /// findings when the call began (nil: unknown), for an answer that says the store is back.
    func serviceError(_ error: ObjectStoreError, began: UInt64? = nil) -> StorageError {
        guard let reason = error.awayReason else {
            if let began { away.withLock { $0.reached(since: began) } } // it answered
            return StorageError(.failed, "\(error)")
        }
        // The answer (and /readyz) names the component and, for credentials refused, that; the
        // store's own words (its address, its message) are the log's.
        let refusesCredentials = if case .refused = error { true } else { false }
        let summary = refusesCredentials ? "the object store refuses toursd's credentials" : "the object store is unavailable"
        if !away.withLock({ $0.found(summary) }) { probe() }
        return StorageError(.unavailable, summary + "; try again shortly", detail: reason, retryAfterSeconds: retryAfterSeconds)
    }

    /// Asks the store for one key every `retryAfterSeconds` until it answers.
    private func probe() {
        Task(executorPreference: io) { [self] in
            while unavailableReason != nil {
                try? await Task.sleep(for: .seconds(max(1, retryAfterSeconds)))
                do {
                    _ = try await calls { try $0.list("", limit: 1) }
                } catch is StorageError {
                    continue // noted by `calls`
                } catch {
                    return // the pool stopped
                }
            }
        }
    }

    // MARK: Whose it is

    /// Whose the bucket is (`StoreOwnership`), claimed for `deployment` when it may be: its
    /// claim under the prefix, and whether `names` (the database) names any blob of `page` (a
    /// page of its objects the caller listed; nil: its first page, listed here). The store's
    /// own errors as they are (the caller tells away from refused).
    package func ownership(deployment: String, databaseName: String, page listed: [ObjectSummary]? = nil,
                   names: @escaping @Sendable ([BlobKey]) async throws -> Bool) async throws -> StoreOwnership {
        let claimName = StoreOwnership.claimName
        let (claimed, page) = try await bucket.run { transfer -> (String?, [ObjectSummary]) in
            var claim: String?
            do {
                claim = String(decoding: try transfer.get(claimName), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            } catch ObjectStoreError.notFound {
                claim = nil
            }
            return (claim, try listed ?? transfer.list("", limit: BucketSweepPlan.pageSize))
        }
        let keys = page.compactMap { BucketSweepPlan.key(of: $0.key) }
        let namesSome = claimed == nil && !keys.isEmpty ? try await names(keys) : false
        let ownership = StoreOwnership.decide(database: deployment, store: claimed, holdsBlobs: !keys.isEmpty, databaseNamesSome: namesSome,
                                              describing: "the bucket \(bucket.settings.bucket)", databaseName: databaseName)
        if ownership == .claim {
            try await bucket.run { try $0.put(claimName, .bytes(Array((deployment + "\n").utf8)), contentType: "text/plain") }
        }
        return ownership
    }

    // MARK: Whole blobs

    /// Receives the body into `tmp/`, its full parts sent toward `key` as they arrive.
    package func receive(_ body: some ByteStream, toward key: BlobKey) async throws -> ReceivedBlob {
        let streamed = StreamedParts(name: Self.name(key), store: self)
        var received: ReceivedBlob
        do {
            received = try await incoming.receive(body) { streamed.written($0) }
        } catch {
            await streamed.abort()
            throw error
        }
        if streamed.finished(received.file) {
            received.streamed = streamed
            do {
                _ = try await streamed.sent()
            } catch {
                await discard(received)
                throw error
            }
        }
        return received
    }

    /// Makes the received body the object `key` unless an object is there (asked first: a
    /// store may ignore `If-None-Match`, and the caller holds the panorama's turn across
    /// daemons): the parts sent while it arrived become the object, or a body of one part at
    /// most goes as one PUT, its digest signed.
    package func place(_ received: ReceivedBlob, as key: BlobKey) async throws -> Bool {
        let name = Self.name(key)
        guard try await calls({ try $0.head(name) }) == nil else { return false }
        if let streamed = received.streamed {
            guard streamed.name == name else { throw StorageError(.failed, "a body sent toward \(streamed.name) cannot be placed as \(name)") }
            let (upload, parts) = try await streamed.sent()
            try await calls { try $0.completeMultipart(name, uploadId: upload, parts: parts) }
        } else {
            let (path, size, sha256) = (received.file.path, received.size, received.sha256)
            let placed = try await calls { transfer -> Bool in
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { throw Disk.failure("open \(path)", errno) }
                defer { close(fd) }
                do {
                    try transfer.put(name, .file(fd: fd, offset: 0, length: size, sha256: sha256), contentType: "application/octet-stream", ifAbsent: true)
                    return true
                } catch {
                    // Placed by another since the HEAD, on a store that honours If-None-Match.
                    guard case ObjectStoreError.preconditionFailed = error else { throw error }
                    return false
                }
            }
            guard placed else { return false }
        }
        await keepCopy(received)
        return true
    }

    /// A body sent: its file becomes the local copy (the next read needs no fetch).
    private func keepCopy(_ received: ReceivedBlob) async {
        if await copies.adopt(received.file.path, size: received.size, sha256: received.sha256) {
            received.file.markPlaced()
        } else {
            await incoming.discard(received)
        }
    }

    package func remove(_ keys: [BlobKey]) async {
        _ = try? await calls { transfer in
            for key in keys {
                if key.kind == .upload {
                    for segment in try transfer.list(Self.name(key) + "/") { try transfer.delete(segment.key) }
                } else {
                    try transfer.delete(Self.name(key))
                }
            }
        }
    }

    /// From the local copy when there is one; a whole read makes it when there is not. A
    /// part of a blob not copied yet is asked of the store alone (its Range passed through)
    /// and sent from a file that holds just it.
    package func openForReading(_ key: BlobKey, sha256: String, range: Range<Int64>, of size: Int64) async throws -> (fd: Int32, offset: Int64) {
        if range.count < size, let copy = try await copies.existing(sha256) {
            return (try await openLocal(copy), range.lowerBound)
        }
        guard range.count < size else { return (try await openLocal(try await localFile(key, sha256: sha256)), range.lowerBound) }
        let spooled = try await io.run { [incoming] () throws(StorageError) -> CopyFile in
            try CopyFile(path: "\(incoming.path)/\(ByteEncoding.hex(randomBytes(12))).range")
        }
        let name = Self.name(key)
        try await calls { transfer in try spooled.fill { sink in try transfer.get(name, range: range, into: sink) } }
        return (try await io.run { try spooled.readable() }, 0)
    }

    private func openLocal(_ path: String) async throws -> Int32 {
        try await io.run {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Disk.failure("open \(path)", errno) }
            return fd
        }
    }

    package func readURL(_ key: BlobKey) -> String? {
        presignedSeconds.map { PresignedURL.get(Self.name(key), settings: bucket.settings, seconds: $0, now: Int64(time(nil))) }
    }

    package func localFile(_ key: BlobKey, sha256: String) async throws -> String {
        try await copies.path(of: sha256) { [self] file in
            let name = Self.name(key)
            try await calls { transfer in try file.fill { sink in try transfer.get(name, range: nil, into: sink) } }
        }
    }

    // MARK: Resumable uploads

    /// The segments hold bytes, not how many of them count: the database's record says.
    package var partialsKeepTheirOffset: Bool { false }

    package func openPartial(_ key: BlobKey, recordedOffset: Int64, capacity: Int64) async throws -> any PartialBlob {
        let (bucket, partSize, folder) = (self.bucket, self.partSize, incoming.path)
        return try await io.run { [self] () throws -> BucketPartial in
            do {
                return try BucketPartial(name: Self.name(key), transfer: try bucket.transfer(), partSize: partSize,
                                         buffer: "\(folder)/\(key.tenant)-\(key.id).partial", recordedOffset: recordedOffset,
                                         failure: { [weak self] error in self?.serviceError(error) ?? StorageError(.unavailable, "\(error)") })
            } catch let error as ObjectStoreError {
                throw serviceError(error)
            }
        }
    }

    /// Copies the segments into `key`, one part each (a single PUT for one), through this
    /// daemon: a store need not copy parts itself (UploadPartCopy).
    package func finish(partial: BlobKey, length: Int64, as key: BlobKey) async throws -> Bool {
        let (source, name) = (Self.name(partial), Self.name(key))
        return try await calls { transfer -> Bool in
            guard try transfer.head(name) == nil else { return false }
            let segments = BucketPartial.chain(try transfer.list(source + "/"), below: source, length: length)
            guard segments.reduce(0, { $0 + $1.size }) == length else {
                throw StorageError(.failed, "the segments of \(source) hold fewer than its \(length) bytes")
            }
            if segments.count <= 1 {
                let bytes = try segments.first.map { try transfer.get($0.key, range: 0..<length) } ?? []
                try transfer.put(name, .bytes(bytes), contentType: "application/octet-stream", ifAbsent: true)
                return true
            }
            let upload = try transfer.startMultipart(name, contentType: "application/octet-stream")
            do {
                var parts: [UploadedPart] = []
                for segment in segments {
                    let bytes = try transfer.get(segment.key, range: 0..<segment.size)
                    let etag = try transfer.putPart(name, uploadId: upload, number: parts.count + 1, .bytes(bytes))
                    parts.append(UploadedPart(number: parts.count + 1, etag: etag, size: Int64(bytes.count)))
                }
                try transfer.completeMultipart(name, uploadId: upload, parts: parts)
            } catch {
                try? transfer.abortMultipart(name, uploadId: upload)
                throw error
            }
            return true
        }
    }

    package func head(partial key: BlobKey) async throws -> [UInt8] {
        let name = Self.name(key)
        return try await calls { transfer in
            do {
                return try transfer.get(BucketPartial.segmentName(name, start: 0), range: 0..<Int64(IncomingBlob.headLength))
            } catch {
                guard case ObjectStoreError.notFound = error else { throw error }
                return [] // an empty upload has no segment
            }
        }
    }
}

/// Whether the store is away, and why. A call that began before the store was last found away
/// and answered after says nothing of now (a slow sweep's listing that ends after an upload
/// found the store gone): only a call begun since may say it is back.
struct StoreAway {
    private(set) var reason: String?
    /// Times the store was found away.
    private(set) var findings: UInt64 = 0

    /// Notes the store away; whether it was already (then a probe is under way).
    mutating func found(_ why: String) -> Bool {
        defer { (reason, findings) = (why, findings + 1) }
        return reason != nil
    }

    /// A call begun at `began` findings reached the store.
    mutating func reached(since began: UInt64) {
        if findings == began { reason = nil }
    }
}
