#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NTServiceModel

extension StartupError {
    /// `mkdir -p`, a failure said in the system's words and naming the folder (Foundation's
    /// would be an NSCocoaErrorDomain dump). Each folder it makes is made durable (its parent
    /// fsynced): a data directory that vanished with a power cut would take the database along.
    public static func makeDirectories(_ path: String) throws(StartupError) {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            let parent = built.isEmpty ? "/" : built
            built += "/" + part
            if mkdir(built, 0o700) == 0 {
                do {
                    try Disk.syncDirectory(parent)
                } catch {
                    throw StartupError("cannot make \(built) durable: \(error.message)")
                }
            } else if errno != EEXIST {
                throw StartupError("cannot create \(path) (\(built): \(String(cString: strerror(errno))))")
            }
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            throw StartupError("cannot create \(path): something that is not a folder is in the way")
        }
    }
}

/// Files of the data directory its owner alone may read: tokens, ids, manifests.
package enum PrivateFile {
    /// A one-line file its owner alone may read (mode 0600), fsynced.
    package static func write(_ path: String, line text: String) throws(StartupError) {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StartupError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let line = Array((text + "\n").utf8)
        guard Glibc.write(fd, line, line.count) == line.count, fsync(fd) == 0 else {
            throw StartupError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
