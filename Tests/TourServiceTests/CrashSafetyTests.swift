#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestSupport

/// API.md "Nothing is acknowledged before it is durable": toursd killed with SIGKILL while
/// panoramas upload loses none it acknowledged, and keeps no row without its whole file.
@Suite struct CrashSafetyTests {
    @Test func sigkillDuringUploadsKeepsEveryAcknowledgedPanoramaWhole() async throws {
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let first = try ToursdProcess(dataDir: dataDir)
        let token = try String(contentsOfFile: dataDir + "/admin.token", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let setup = try APIClient(port: first.port, token: token)
        let (propertyId, floorId) = try setup.makeFloor()

        // Eight panoramas of 4 MB: four complete and are acknowledged; four send half their
        // body and are still in flight when the daemon is killed.
        let size = 4 << 20
        let images = (0..<8).map { imageBytes(size, seed: UInt8($0 + 1)) }
        let ids = (0..<8).map { _ in newID() }
        let acknowledged = Mutex<[Int: Int]>([:])
        let halfSent = Atomic<Int>(0)
        let killed = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let port = first.port
        for index in 0..<8 {
            DispatchQueue.global().async(group: group) {
                guard let raw = try? RawClient(port: port, timeoutSeconds: 30) else { return }
                let image = images[index]
                let head = "PUT /v1/panoramas/\(ids[index])?floorId=\(floorId) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: image/jpeg\r\nRepr-Digest: \(reprDigest(image))\r\nContent-Length: \(image.count)\r\n\r\n"
                if index < 4 {
                    try? raw.send(Array(head.utf8) + image)
                    if let response = try? raw.readResponse() { acknowledged.withLock { $0[index] = response.status } }
                } else {
                    try? raw.send(Array(head.utf8) + Array(image[0..<(size / 2)]))
                    halfSent.wrappingAdd(1, ordering: .sequentiallyConsistent)
                    killed.wait()
                    try? raw.send(Array(image[(size / 2)...])) // the daemon is gone: fails
                }
            }
        }
        // Bounded waits for the state to kill in: four acknowledged, four bodies in progress.
        let monitor = try APIClient(port: first.port, token: nil)
        var inProgress = 0
        for _ in 0..<600 {
            let done = acknowledged.withLock { $0.count }
            let metrics = try monitor.send("GET", "/metrics").text
            inProgress = metrics.split(separator: "\n").first { $0.hasPrefix("http_uploads_in_progress ") }
                .flatMap { Int($0.split(separator: " ")[1]) } ?? 0
            if done == 4 && halfSent.load(ordering: .sequentiallyConsistent) == 4 && inProgress == 4 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(acknowledged.withLock { $0 }.values.sorted() == [201, 201, 201, 201])
        #expect(inProgress == 4)
        first.signal(SIGKILL)
        _ = first.wait()
        for _ in 0..<4 { killed.signal() }
        group.wait()

        // After restart: acknowledged ones whole, in-flight ones absent, nothing partial.
        let second = try ToursdProcess(dataDir: dataDir)
        let client = try APIClient(port: second.port, token: token)
        for index in 0..<4 {
            let content = try client.send("GET", "/v1/panoramas/\(ids[index])/content")
            #expect(content.status == 200)
            #expect(sha256Hex(content.body) == sha256Hex(images[index]), "panorama \(index) is not whole")
        }
        for index in 4..<8 {
            #expect(try client.send("GET", "/v1/panoramas/\(ids[index])").status == 404)
        }
        let tourId = try #require(try client.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let floors = try client.send("GET", "/v1/tours/\(tourId)").json?["floors"] as? [[String: Any]] ?? []
        let listed = floors.flatMap { $0["panoramas"] as? [[String: Any]] ?? [] }
        #expect(listed.count == 4)
        for panorama in listed {
            let content = try client.send("GET", "/v1/panoramas/\(panorama["id"] as? String ?? "")/content")
            #expect(sha256Hex(content.body) == panorama["sha256"] as? String, "a row points at a missing or partial file")
        }
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: dataDir + "/tmp")) ?? []
        #expect(leftovers.isEmpty, "temporary files survived the restart: \(leftovers)")
        let stored = (try? FileManager.default.contentsOfDirectory(atPath: dataDir + "/blobs/1/panoramas")) ?? []
        #expect(Set(stored) == Set(ids[0..<4]))
        second.signal(SIGTERM)
        #expect(second.wait().status == 0)
    }
}
