#if canImport(Glibc)
import Glibc
#endif

/// The names in a directory (not "." and ".."), for /proc's directories: Foundation's listing
/// copies each entry's whole 256-byte `d_name`, reading past readdir's buffer, and with some
/// 1,300 entries (descriptors or threads of a test process) that crashed it. Each name is read
/// where readdir put it, up to its NUL.
public func directoryEntries(_ path: String) -> [String] {
    guard let directory = opendir(path) else { return [] }
    defer { closedir(directory) }
    let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// The paths of the files under `root`, and of its folders when `withFolders` (relative to it;
/// none when it is not there). Unlike Foundation's `subpaths(atPath:)`, which gives up (nil) when an entry goes
/// while it walks, a file renamed or removed meanwhile (a preview cached behind its answer) is
/// only left out.
public func filesUnder(_ root: String, withFolders: Bool = false) -> [String] {
    var files: [String] = []
    var folders = [""]
    while let folder = folders.popLast() {
        for name in directoryEntries(root + "/" + folder) {
            let path = folder.isEmpty ? name : folder + "/" + name
            var info = stat()
            guard lstat(root + "/" + path, &info) == 0 else { continue }
            if info.st_mode & S_IFMT != S_IFDIR || withFolders { files.append(path) }
            if info.st_mode & S_IFMT == S_IFDIR { folders.append(path) }
        }
    }
    return files
}
