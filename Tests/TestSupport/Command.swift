import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to its end, bounded: killed after `timeoutSeconds` (its status then says
/// so). Returns its exit status (or the signal that ended it), stdout and stderr. Stderr goes
/// to a temporary file, so neither stream can fill a pipe and block the program; stdin is
/// `stdin` (a file's path) or /dev/null; the program inherits no descriptor but the three.
///
/// posix_spawn, not Foundation's `Process`: to close the parent's descriptors `Process.run`
/// lists /proc/self/fd and copies each entry's whole `d_name`, reading past readdir's buffer;
/// with some 1,300 descriptors open (a balanced test pass) that crashed the test process.
public func runCommand(_ path: String, _ arguments: [String], stdin: String? = nil,
                       workingDirectory: URL? = nil, timeoutSeconds: Double = 300) throws -> (status: Int32, out: String, err: String) {
    let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(UUID().uuidString)").path
    let errFD = open(errPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard errFD >= 0 else { throw CocoaError(.fileWriteUnknown) }
    defer { try? FileManager.default.removeItem(atPath: errPath) }
    var out: [Int32] = [-1, -1]
    guard pipe(&out) == 0 else {
        close(errFD)
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    for fd in out { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, out[1], 1)
    posix_spawn_file_actions_adddup2(&actions, errFD, 2)
    posix_spawn_file_actions_addclosefrom_np(&actions, 3)
    if let workingDirectory { posix_spawn_file_actions_addchdir_np(&actions, workingDirectory.path) }
    let argv = ([path] + arguments).map { strdup($0) }
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, path, &actions, nil, argv + [nil], environ)
    close(out[1])
    close(errFD)
    guard spawned == 0 else {
        close(out[0])
        throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO)
    }
    let watchdog = Watchdog(pid: pid, seconds: timeoutSeconds)
    let outData = FileHandle(fileDescriptor: out[0], closeOnDealloc: true).readDataToEndOfFile()
    let status = watchdog.waitForExit()
    let errData = FileManager.default.contents(atPath: errPath) ?? Data()
    return (status, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}
