import Dispatch
import Synchronization

/// One writer and a few readers on the same WAL database: writes run one at a time on the
/// writer's queue, reads run on any thread with a reader of their own, so reads never wait
/// behind a long write.
public final class DatabasePool: Sendable {
    private let writer: LockedDatabase
    private let writerQueue = DispatchQueue(label: "sqlite.writer")
    private let readers: Mutex<[LockedDatabase]>
    private let path: String

    public init(path: String, readerCount: Int = 4) throws(SQLiteError) {
        self.path = path
        writer = LockedDatabase(try Database(path: path))
        var made: [LockedDatabase] = []
        for _ in 0..<max(1, readerCount) {
            made.append(LockedDatabase(try Database(path: path)))
        }
        readers = Mutex(made)
    }

    /// Runs `body` with the writer, blocking the caller until done (for start-up and tools).
    public func writeNow<T>(_ body: (Database) throws -> T) rethrows -> T {
        try writerQueue.sync { try writer.use(body) }
    }

    /// Runs `body` with the writer on the writer's queue, then `completion` with its result.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        writerQueue.async { [writer] in
            completion(Result { try writer.use(body) })
        }
    }

    /// Runs `body` with a reader of its own (a fresh connection when all are busy).
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        let reader = readers.withLock { $0.popLast() }
        let database = try reader ?? LockedDatabase(Database(path: path))
        defer { readers.withLock { $0.append(database) } }
        return try database.use(body)
    }
}

/// A connection that is used by one thread at a time.
private final class LockedDatabase: @unchecked Sendable {
    private let database: Database
    private let lock = Mutex(())

    init(_ database: Database) { self.database = database }

    func use<T>(_ body: (Database) throws -> T) rethrows -> T {
        try lock.withLock { _ in try body(database) }
    }
}
