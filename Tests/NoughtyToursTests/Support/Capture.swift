import Foundation
import TestSupport
@testable import NoughtyTours

/// A recorded panorama's folder, as the capture hands it over: `bytes` bytes that differ
/// with `seed`, starting with the signature of the type `name` says.
func recordedFolder(bytes: Int = 4096, name: String = "pano.jpg", seed: Int = 7) throws -> URL {
    let folder = testDirectory("capture")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    // 64 KiB blocks, each stamped with its number: quick to make, and no two blocks alike.
    var block = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* seed &+ $0 >> 11) }
    var data = Data(capacity: bytes)
    var number = 0
    while data.count < bytes {
        withUnsafeBytes(of: number) { block.replaceSubrange(0..<$0.count, with: $0) }
        data.append(contentsOf: block.prefix(bytes - data.count))
        number += 1
    }
    try Data(ImageSignature.stamped(Array(data), as: name)).write(to: folder.appendingPathComponent(name))
    return folder
}

/// Readings that keep the shot.
let good = CaptureReadings(iso: 400, shutterSeconds: 1.0 / 60)

/// Records and keeps one panorama; returns its id.
@discardableResult
func capturePanorama(_ session: PanoramaCaptureSession, bytes: Int = 4096, seed: Int = 7, position: PanoramaPosition? = nil) async throws -> String {
    let outcome = try await session.record(folder: try recordedFolder(bytes: bytes, seed: seed), image: "pano.jpg", readings: good, position: position)
    guard case .kept(let id) = outcome else { throw NoughtyToursError.invalidInput("not kept: \(outcome)") }
    return id
}

/// Sync options for tests: backoff in milliseconds.
func fastSync(resumableThreshold: Int64 = 1 << 20) -> SyncOptions {
    var options = SyncOptions()
    options.initialBackoff = .milliseconds(5)
    options.maxBackoff = .milliseconds(40)
    options.connectTimeout = .seconds(2)
    options.resumableThreshold = resumableThreshold
    return options
}
