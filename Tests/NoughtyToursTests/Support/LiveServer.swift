#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
@testable import NoughtyTours

/// A real toursd for the library to sync with, on an OS-chosen port, with its first tenant's
/// token; and the server-side reads tests compare the local store with.
final class LiveServer {
    let toursd: ToursdProcess
    let token: String

    /// `environment`: configuration keys as `TOURSD_<key>` (a small body limit, say).
    init(dataDir: String = testDirectory("toursd").path,
         port: UInt16 = 0, environment: [String: String] = [:]) throws {
        toursd = try ToursdProcess(dataDir: dataDir, port: port, environment: environment)
        token = try toursd.adminToken
    }

    var port: UInt16 { toursd.port }
    var dataDir: String { toursd.dataDir }
    var url: URL { toursd.baseURL }

    /// Stops it with SIGTERM (as an operator would) and waits.
    func stop() {
        toursd.signal(SIGTERM)
        _ = toursd.wait()
    }

    /// A GET with the token; the JSON answer.
    func json(_ path: String) throws -> [String: Any] {
        let response = try RawClient(port: port).request("GET", path, headers: ["Authorization": "Bearer \(token)"])
        guard response.status == 200, let json = response.json else {
            throw ToursdProcess.Failure(description: "GET \(path): \(response.status) \(response.text)")
        }
        return json
    }
}

/// A library on a fresh storage directory, syncing with `server`.
func makeSyncingLibrary(server: URL, token: String, options: SyncOptions = fastSync(),
                        directory: URL = testDirectory("client")) async throws -> NoughtyTours {
    try await NoughtyTours(configuration: Configuration(server: server, token: token, storageDirectory: directory, sync: options))
}

/// Starts the queue, waits until nothing more can be sent, and stops it.
func drain(_ tours: NoughtyTours) async throws {
    try await tours.start()
    await tours.idle()
    await tours.stop()
}

/// The queue's items as (kind, state, attempts), for assertions.
func queueItems(_ tours: NoughtyTours, kind: Queue.Kind? = nil) async throws -> [(kind: String, state: String, attempts: Int)] {
    try await tours.store.read { db in
        try db.query("SELECT kind, state, attempts FROM queue_items ORDER BY id").map {
            (kind: try $0.decode(0, as: String.self), state: try $0.decode(1, as: String.self), attempts: try $0.decode(2, as: Int.self))
        }.filter { kind == nil || $0.kind == kind!.rawValue }
    }
}
