import Foundation
import NTSQLiteDB
import NTThreadPools

/// The library's local storage: one SQLite connection (WAL, synchronous=FULL) in the storage
/// directory, used only from this actor. Every write is a transaction; the tables it changed
/// are told to observers after it commits. The actor runs on a thread of its own (`thread`),
/// never on Swift's cooperative threads: its commits and the file work given to `files` block.
actor LocalStore {
    nonisolated let directory: URL
    /// The storage's thread: this actor's executor, and the capture sessions'.
    nonisolated let thread: SerialThread
    nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }
    private let database: Database
    let observation: ChangeObservation
    /// Streams stopped before their observer was registered.
    private var stoppedStreams: Set<Int> = []
    private var streamObservers: [Int: Int] = [:]

    init(directory: URL) throws(NoughtyToursError) {
        self.directory = directory
        thread = SerialThread(name: "noughtytours-storage")
        do {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("panoramas"), withIntermediateDirectories: true)
            // Its owner's alone, as the photographs of someone's home and the queue are.
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
            // Writable, or storage is unavailable now rather than at the first capture. A name
            // of its own: two processes opening the storage at once (tours sync and a capture)
            // must not remove each other's probe.
            let probe = directory.appendingPathComponent(".write-probe-\(UUID().uuidString)")
            guard FileManager.default.createFile(atPath: probe.path, contents: Data([1])) else {
                throw NoughtyToursError.storageUnavailable(reason: "\(directory.path) is not writable")
            }
            try FileManager.default.removeItem(at: probe)
            database = try Database(path: directory.appendingPathComponent("noughtytours.sqlite").path)
            try Migrator.migrate(database, ClientMigrations.all)
            // The names made here (the storage directory itself, the database, panoramas/)
            // survive a power loss.
            try LocalFiles.syncDirectory(of: directory.appendingPathComponent("noughtytours.sqlite").path)
            try LocalFiles.syncDirectory(of: directory.standardizedFileURL.path)
        } catch let error as NoughtyToursError {
            throw error
        } catch {
            throw .storageUnavailable(reason: "\(directory.path): \(error)")
        }
        observation = ChangeObservation(database: database)
    }

    /// When the last write committed (for make bench: statusUpdates timed from the commit).
    private(set) var lastCommit: ContinuousClock.Instant?

    /// Runs `body` in a transaction; observers hear of it once committed.
    func write<T>(_ body: (Database) throws -> T) throws(NoughtyToursError) -> T {
        do {
            let value = try database.transaction { try body(database) }
            lastCommit = .now
            observation.transactionCommitted()
            return value
        } catch {
            observation.transactionRolledBack()
            throw Self.mapped(error)
        }
    }

    /// Blocking file work (a copy into storage, a digest, an fsync, a removal), on the storage's
    /// thread.
    func files<T>(_ body: () throws(NoughtyToursError) -> T) throws(NoughtyToursError) -> T {
        try body()
    }

    /// Removes files no row names any more, on the storage's thread (one already gone is fine).
    func removeFiles(_ paths: [String]) {
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
    }

    func read<T>(_ body: (Database) throws -> T) throws(NoughtyToursError) -> T {
        do {
            return try body(database)
        } catch {
            throw Self.mapped(error)
        }
    }

    static func mapped(_ error: any Error) -> NoughtyToursError {
        if let error = error as? NoughtyToursError { return error }
        return .storageUnavailable(reason: "\(error)")
    }

    // MARK: Observing

    /// Registers a stream's observer, unless the stream already stopped.
    func observe(stream: Int, _ observer: @escaping (Set<String>) -> Void) -> Bool {
        if stoppedStreams.remove(stream) != nil { return false }
        streamObservers[stream] = observation.add(observer)
        return true
    }

    /// Removes a stream's observer (or remembers the stream stopped before it registered).
    func stopObserving(stream: Int) {
        if let token = streamObservers.removeValue(forKey: stream) {
            observation.remove(token)
        } else {
            stoppedStreams.insert(stream)
        }
    }

    var observerCount: Int { streamObservers.count }
}
