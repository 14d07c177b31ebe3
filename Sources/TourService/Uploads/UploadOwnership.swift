import Foundation
import Hashing
import Logging
import PostgresDB
import Synchronization
import ThreadPools

/// Which daemon writes an upload's partial file. With one daemon, its sessions decide (a newer
/// PATCH takes over at once). With several on one PostgreSQL and one blob folder, a daemon
/// writes an upload only while it holds the upload's advisory lock; a newer PATCH arriving at
/// another daemon asks the holder to stop (NOTIFY), and the holder ends its session (its
/// writes done), lets go of the lock, and the newer PATCH proceeds from the offset the
/// database records. A daemon that died lets go with its connection.
protocol UploadOwnership: Sendable {
    /// Makes this daemon the upload's writer; returns a token for `release`.
    func acquire(_ key: BlobKey) async throws -> UInt64
    func release(_ key: BlobKey, _ token: UInt64) async
    func stop()
}

/// One daemon: nothing to coordinate beyond its own sessions.
struct LocalOwnership: UploadOwnership {
    func acquire(_ key: BlobKey) async throws -> UInt64 { 0 }
    /// Resumes the caller after a while, holding no thread meanwhile (a timer, not a wait).
    private static func pause(milliseconds: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { continuation.resume() }
        }
    }

    func release(_ key: BlobKey, _ token: UInt64) async {}
    func stop() {}
}

/// Several daemons on one PostgreSQL (see `UploadOwnership`). The locks live on one
/// connection of this daemon's own, on a thread of its own; the takeover requests arrive on a
/// second connection that LISTENs, on another thread.
final class SharedOwnership: UploadOwnership {
    static let channel = "toursd_upload_takeover"
    private let url: String
    private let waitSeconds: Double
    private let logger: Logger
    /// Ends this daemon's session of an upload and returns once its writes are done.
    private let yieldUpload: @Sendable (BlobKey) async -> Void
    private let lockThread = ThreadPool(name: "upload-locks", threads: 1)
    private let listenThread = ThreadPool(name: "upload-takeover", threads: 1)
    private let lockConnection = Mutex<PostgresConnection?>(nil)
    /// The PATCHes of this daemon holding each upload's lock.
    private let holders = Mutex<[BlobKey: Set<UInt64>]>([:])
    private let tokens = Atomic<UInt64>(0)
    private let running = Atomic<Bool>(true)

    init(url: String, waitSeconds: Double, logger: Logger, yieldUpload: @escaping @Sendable (BlobKey) async -> Void) {
        self.url = url
        self.waitSeconds = waitSeconds
        self.logger = logger
        self.yieldUpload = yieldUpload
        listenThread.submit { [weak self] _ in self?.listen() }
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        lockThread.stop()
        listenThread.stop()
    }

    /// The upload's lock key: 64 bits of the SHA-256 of its name.
    static func lockKey(_ key: BlobKey) -> Int64 {
        let digest = StreamingDigest.hash(.sha256, Array("\(key.tenant)/\(key.id)".utf8))
        return digest.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    func acquire(_ key: BlobKey) async throws -> UInt64 {
        let token = tokens.add(1, ordering: .relaxed).newValue
        // Another PATCH of this daemon holds it: the sessions settle it locally.
        let heldHere = holders.withLock { holders -> Bool in
            guard holders[key]?.isEmpty == false else { return false }
            holders[key, default: []].insert(token)
            return true
        }
        if heldHere { return token }
        let lock = Self.lockKey(key)
        let deadline = ContinuousClock.now + .milliseconds(Int(waitSeconds * 1000))
        var polls = 0
        while true {
            let taken = try await onLockConnection { connection in
                try connection.first("SELECT pg_try_advisory_lock(?) AS taken", lock)?["taken"].int == 1
            }
            if taken {
                _ = holders.withLock { $0[key, default: []].insert(token) }
                return token
            }
            if polls % 25 == 0 {
                // The holder is told (again every half second: a listener that was reconnecting
                // missed it); it lets go as soon as its writes are done.
                _ = try await onLockConnection { connection in
                    try connection.query("SELECT pg_notify(?, ?)", Self.channel, "\(key.tenant)/\(key.id)")
                }
            }
            polls += 1
            guard ContinuousClock.now < deadline else {
                throw ServiceError(.unavailable, "another daemon still writes upload \(key.id); try again", retryAfterSeconds: 1)
            }
            // The holder needs a round trip to hear and a moment to finish its last write.
            await Self.pause(milliseconds: 20)
        }
    }

    /// Resumes the caller after a while, holding no thread meanwhile (a timer, not a wait).
    private static func pause(milliseconds: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { continuation.resume() }
        }
    }

    func release(_ key: BlobKey, _ token: UInt64) async {
        let last = holders.withLock { holders -> Bool in
            guard holders[key]?.remove(token) != nil else { return false }
            if holders[key]?.isEmpty == true {
                holders[key] = nil
                return true
            }
            return false
        }
        if last { await unlock(key) }
    }

    /// Another daemon asked for the upload: this daemon's session ends, then the lock goes.
    private func yield(_ key: BlobKey) async {
        guard holders.withLock({ $0[key] != nil }) else { return }
        await yieldUpload(key)
        let held = holders.withLock { $0.removeValue(forKey: key) != nil }
        if held { await unlock(key) }
    }

    private func unlock(_ key: BlobKey) async {
        let lock = Self.lockKey(key)
        do {
            _ = try await onLockConnection { try $0.query("SELECT pg_advisory_unlock(?)", lock) }
        } catch {
            logger.warn("an upload's lock could not be let go", ["upload": key.id, "error": "\(error)"])
        }
    }

    private func onLockConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await lockThread.run { [self] in
            let connection = try lockConnection.withLock { current -> PostgresConnection in
                if let current, !current.isBroken { return current }
                // A new connection: locks held on the old one went with it.
                let made = try PostgresConnection(url: url)
                current = made
                return made
            }
            return try body(connection)
        }
    }

    /// The takeover requests, for as long as the daemon runs: LISTEN, and on each request for
    /// an upload this daemon holds, yield it. A broken connection is made again.
    private func listen() {
        var connection: PostgresConnection?
        while running.load(ordering: .relaxed) {
            do {
                if connection == nil || connection?.isBroken == true {
                    let made = try PostgresConnection(url: url)
                    try made.execute("LISTEN toursd_upload_takeover") // Self.channel
                    connection = made
                }
                for payload in try connection?.notifications(timeoutMilliseconds: 250) ?? [] {
                    let parts = payload.split(separator: "/", maxSplits: 1)
                    guard parts.count == 2, let tenant = Int64(parts[0]) else { continue }
                    let key = BlobKey(tenant: tenant, kind: .upload, id: String(parts[1]))
                    // On this daemon's own thread: the request is answered even when Swift's
                    // shared pool is busy.
                    Task(executorPreference: lockThread) { await self.yield(key) }
                }
            } catch {
                connection = nil
                var idle = pollfd()
                _ = poll(&idle, 0, 250) // the database is away: try again shortly
            }
        }
    }
}
