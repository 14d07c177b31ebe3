#if canImport(Glibc)
import Glibc
#endif
import NTSQLKit
import CNTSQLite
import Dispatch
import Synchronization

/// The database file a pool opened, told apart from whatever is at its path later: deleted
/// while open, SQLite goes on writing into the unlinked inode and every commit is lost at the
/// next start. Checked with one `stat`, before each commit and for a health check.
public struct DatabaseFile: Sendable {
    public let path: String
    private let device: UInt64
    private let inode: UInt64

    init(path: String) throws(SQLiteError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "\(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        self.path = path
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// Why the file at `path` is no longer the one opened; nil while it is.
    public var problem: DatabaseFileGone? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return DatabaseFileGone(what: "deleted", message: "the database file \(path) was deleted while it was open (\(String(cString: strerror(errno))))")
        }
        guard UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode else {
            return DatabaseFileGone(what: "replaced", message: "the database file \(path) was replaced while it was open")
        }
        return nil
    }
}

/// A write refused because the database file it would commit to is gone from its path:
/// nothing is committed; only a restart on the restored file can go on.
public struct DatabaseFileGone: StorageFailure, Sendable, CustomStringConvertible {
    /// What happened to the file: "deleted" or "replaced".
    public let what: String
    /// The same with its path, for the log and the operator.
    public let message: String
    public var description: String { message }
    /// Nothing can be stored until an operator puts the file back and restarts. The answer
    /// says what happened, not where.
    public var storageError: StorageError {
        StorageError(.unavailable, "the database is unavailable: its file was \(what) while the server ran; nothing can be stored until it is restored",
                     detail: message)
    }
}

/// A `DatabaseFile` looked at before each commit and every few seconds on a timer (a Dispatch
/// queue, never an event loop), remembering what it saw: once gone, the file stays gone for
/// this pool, whatever appears at its path later.
final class DatabaseFileWatch: Sendable {
    private let file: DatabaseFile
    private let seen = Sighting()
    private let timer: UncheckedTimer

    init(_ file: DatabaseFile, everySeconds seconds: Int) {
        self.file = file
        let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer = UncheckedTimer(source: source)
        source.schedule(deadline: .now() + .seconds(seconds), repeating: .seconds(max(1, seconds)), leeway: .milliseconds(100))
        // The handler holds the file and what was seen, not this object: the watch goes with its pool.
        source.setEventHandler { [file, seen] in _ = seen.record(file.problem) }
        source.resume()
    }

    /// Looks now (one `stat`); what it finds is remembered.
    func check() -> DatabaseFileGone? { lastSeen ?? seen.record(file.problem) }

    var lastSeen: DatabaseFileGone? { seen.gone }

    func stop() { timer.source.cancel() }

    /// The first sign of the file gone, kept.
    private final class Sighting: Sendable {
        private let first = Mutex<DatabaseFileGone?>(nil)
        var gone: DatabaseFileGone? { first.withLock { $0 } }
        func record(_ gone: DatabaseFileGone?) -> DatabaseFileGone? {
            guard let gone else { return nil }
            return first.withLock { first in
                first = first ?? gone
                return first
            }
        }
    }
}

/// A Dispatch timer, made and cancelled by its watch alone.
private struct UncheckedTimer: @unchecked Sendable {
    let source: DispatchSourceTimer
}
