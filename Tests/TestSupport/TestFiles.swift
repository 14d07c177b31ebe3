#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where tests keep their files: one folder per test process, removed when the process exits
/// (Swift Testing has no teardown for a whole run), so that runs leave nothing in /tmp.
public let testFilesRoot: URL = {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("noughtytours-tests-\(getpid())")
    try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: testFilesRoot) }
    return root
}()

/// A new path under the run's folder, named by `prefix` (not created).
public func testDirectory(_ prefix: String) -> URL {
    testFilesRoot.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
}
