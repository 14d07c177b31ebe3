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
