import Foundation

/// Runs a program to its end, bounded: killed after `timeoutSeconds` (its status then says
/// so). Returns its exit status (or the signal that ended it), stdout and stderr. Stderr goes
/// to a temporary file, so neither stream can fill a pipe and block the program; stdin is
/// `stdin` (a file's path) or /dev/null; the program inherits no descriptor but the three.
/// `environment`: the program's whole environment (nil: the test process's).
public func runCommand(_ path: String, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
                       workingDirectory: URL? = nil, timeoutSeconds: Double = 300) throws -> (status: Int32, out: String, err: String) {
    let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: errPath) }
    let process = try ChildProcess(path, arguments, environment: environment, workingDirectory: workingDirectory?.path, stdin: stdin,
                                   standardOutput: .pipe, standardError: .file(errPath))
    let watchdog = Watchdog(process, seconds: timeoutSeconds)
    defer { watchdog.cancel() }
    let outData = process.standardOutput!.readDataToEndOfFile()
    let status = process.waitUntilExit().status
    let errData = FileManager.default.contents(atPath: errPath) ?? Data()
    return (status, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}
