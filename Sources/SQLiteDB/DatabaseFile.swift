#if canImport(Glibc)
import Glibc
#endif
import CSQLite

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
            return DatabaseFileGone(message: "the database file \(path) was deleted while it was open (\(String(cString: strerror(errno))))")
        }
        guard UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode else {
            return DatabaseFileGone(message: "the database file \(path) was replaced while it was open")
        }
        return nil
    }
}

/// A write refused because the database file it would commit to is gone from its path:
/// nothing is committed; only a restart on the restored file can go on.
public struct DatabaseFileGone: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
