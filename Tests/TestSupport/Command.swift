import Foundation

/// Runs a program to completion; returns its exit status, stdout and stderr. Stderr goes to
/// a temporary file, so neither stream can fill a pipe and block the program.
/// Runs a program to its end, bounded: killed after `timeoutSeconds` (its status then says so).
public func runCommand(_ path: String, _ arguments: [String], stdin: String? = nil,
                       workingDirectory: URL? = nil, timeoutSeconds: Double = 300) throws -> (status: Int32, out: String, err: String) {
    let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(UUID().uuidString)").path
    guard FileManager.default.createFile(atPath: errPath, contents: nil), let errFile = FileHandle(forWritingAtPath: errPath) else {
        throw CocoaError(.fileWriteUnknown)
    }
    defer { try? FileManager.default.removeItem(atPath: errPath) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let workingDirectory { process.currentDirectoryURL = workingDirectory }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = errFile
    if let stdin { process.standardInput = FileHandle(forReadingAtPath: stdin) }
    try process.run()
    let watchdog = Watchdog(process, seconds: timeoutSeconds)
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    try errFile.close()
    let errData = FileManager.default.contents(atPath: errPath) ?? Data()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}
