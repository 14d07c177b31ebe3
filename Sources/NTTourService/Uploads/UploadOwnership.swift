import Foundation
import NTHashing
import NTLogging
import NTPostgresDB
import Synchronization
import NTThreadPools

/// Which daemon writes an upload's partial file. With one daemon, its sessions decide (a newer
/// PATCH takes over at once). With several on one PostgreSQL and one blob folder, a daemon
/// writes an upload only while it holds the upload's advisory lock; a newer PATCH arriving at
/// another daemon asks the holder to stop (NOTIFY), and the holder ends its session (its
/// writes done, a finish under way completed), lets go of the lock, and the newer PATCH
/// proceeds from the offset the database records. A daemon that died lets go with its
/// connection.
protocol UploadOwnership: Sendable {
    /// Makes this daemon the upload's writer; returns a token for `release`.
    func acquire(_ key: BlobKey) async throws -> UInt64
    /// `acquire` when no other daemon writes the upload now; nil (at once) when one does.
    func tryAcquire(_ key: BlobKey) async throws -> UInt64?
    func release(_ key: BlobKey, _ token: UInt64) async
    /// Whether `token` still makes this daemon the upload's writer (another daemon may have
    /// taken the upload since).
    func holds(_ key: BlobKey, _ token: UInt64) -> Bool
    func stop()
    /// Whether other daemons may take an upload over (they continue from what is recorded).
    var spansDaemons: Bool { get }
}

/// One daemon: nothing to coordinate beyond its own sessions.
struct LocalOwnership: UploadOwnership {
    func acquire(_ key: BlobKey) async throws -> UInt64 { 0 }
    func tryAcquire(_ key: BlobKey) async throws -> UInt64? { 0 }
    func release(_ key: BlobKey, _ token: UInt64) async {}
    func holds(_ key: BlobKey, _ token: UInt64) -> Bool { true }
    func stop() {}
    var spansDaemons: Bool { false }
}

/// Several daemons on one PostgreSQL (see `UploadOwnership`). The locks are the daemon's
/// `AdvisoryLocks`; the takeover requests arrive on a connection that LISTENs, on a thread of
/// its own.
final class SharedOwnership: UploadOwnership {
    static let channel = "toursd_upload_takeover"
    private let url: String
    private let locks: AdvisoryLocks
    private let waitSeconds: Double
    private let logger: Logger
    /// Ends this daemon's session of an upload once no finish of it is under way, waits for
    /// its writes, and runs `letGo` before any session of it can open again.
    typealias Yield = @Sendable (_ key: BlobKey, _ letGo: @Sendable () async -> Void) async -> Void
    private let yieldUpload: Yield
    private let listenThread = ThreadPool(name: "upload-takeover", threads: 1)
    /// The PATCHes of this daemon holding each upload's lock.
    private let holders = Mutex<[BlobKey: Set<UInt64>]>([:])
    private let tokens = Atomic<UInt64>(0)
    private let running = Atomic<Bool>(true)

    init(url: String, locks: AdvisoryLocks, waitSeconds: Double, logger: Logger, yieldUpload: @escaping Yield) {
        self.url = url
        self.locks = locks
        self.waitSeconds = waitSeconds
        self.logger = logger
        self.yieldUpload = yieldUpload
        listenThread.submit { [weak self] _ in self?.listen() }
        locks.whenLost { [weak self] in await self?.lostAll() }
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        listenThread.stop()
    }

    var spansDaemons: Bool { true }

    /// The upload's lock name (and the takeover request's payload).
    static func lockName(_ key: BlobKey) -> String { "\(key.tenant)/\(key.id)" }

    func acquire(_ key: BlobKey) async throws -> UInt64 {
        let token = try await take(key) { [locks, waitSeconds] name in
            try await locks.lock(name, waitSeconds: waitSeconds, busy: "another daemon still writes upload \(key.id); try again") { tries in
                // The holder is told (again every half second: a listener that was
                // reconnecting missed it); it lets go as soon as its writes are done.
                if tries % 25 == 0 { try await locks.notify(Self.channel, name) }
            }
            return true
        }
        return token! // `lock` takes it or throws
    }

    func tryAcquire(_ key: BlobKey) async throws -> UInt64? {
        try await take(key) { [locks] name in try await locks.tryLock(name) }
    }

    /// A token for the upload: at once when a PATCH of this daemon holds it (the sessions
    /// settle it locally), else once `lock` took its lock (nil: it did not).
    private func take(_ key: BlobKey, lock: (String) async throws -> Bool) async throws -> UInt64? {
        let token = tokens.add(1, ordering: .relaxed).newValue
        let heldHere = holders.withLock { holders -> Bool in
            guard holders[key]?.isEmpty == false else { return false }
            holders[key, default: []].insert(token)
            return true
        }
        if heldHere { return token }
        guard try await lock(Self.lockName(key)) else { return nil }
        _ = holders.withLock { $0[key, default: []].insert(token) }
        return token
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

    func holds(_ key: BlobKey, _ token: UInt64) -> Bool {
        holders.withLock { $0[key]?.contains(token) == true }
    }

    /// Another daemon asked for the upload: this daemon's session ends, then the lock goes.
    private func yield(_ key: BlobKey) async {
        guard holders.withLock({ $0[key] != nil }) else { return }
        logger.info("another daemon asks for an upload this one writes; its writer stops", ["upload": key.id])
        await yieldUpload(key) {
            let held = self.holders.withLock { $0.removeValue(forKey: key) != nil }
            if held { await self.unlock(key) }
        }
    }

    /// The connection holding this daemon's upload locks broke (the database restarted):
    /// another daemon may take any of them now, so this daemon's writers stop; their clients
    /// resume from the offset the database records.
    private func lostAll() async {
        let keys = holders.withLock { holders -> [BlobKey] in
            defer { holders = [:] }
            return Array(holders.keys)
        }
        guard !keys.isEmpty else { return }
        logger.warn("upload locks went with their database connection; their writers stop", ["uploads": String(keys.count)])
        for key in keys { await yieldUpload(key) {} }
    }

    private func unlock(_ key: BlobKey) async {
        do {
            try await locks.unlock(Self.lockName(key))
        } catch {
            logger.warn("an upload's lock could not be let go", ["upload": key.id, "error": "\(error)"])
        }
    }

    /// The takeover requests, for as long as the daemon runs: LISTEN, and on each request for
    /// an upload this daemon holds, yield it. A broken connection is made again.
    private func listen() {
        var connection: PostgresConnection?
        while running.load(ordering: .relaxed) {
            // While this daemon writes uploads, their locks' connection is looked at every turn
            // (about every 250 ms), the database away or not.
            if holders.withLock({ !$0.isEmpty }) { Task(executorPreference: locks.thread) { await self.locks.watch() } }
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
                    Task(executorPreference: locks.thread) { await self.yield(key) }
                }
            } catch {
                connection = nil
                var idle = pollfd()
                _ = poll(&idle, 0, 250) // the database is away: try again shortly
            }
        }
    }
}
