import Foundation
import Testing
import TestSupport

/// Building blocks of the API tests: a property, a floor, a plan, a panorama.
extension APIClient {
    @discardableResult
    func putProperty(_ id: String, name: String = "Villa", floorCount: Int = 2, metadata: [String: String] = [:]) throws -> RawClient.Response {
        try send("PUT", "/v1/properties/\(id)", json: ["name": name, "floorCount": floorCount, "metadata": metadata])
    }

    @discardableResult
    func putFloor(_ propertyId: String, _ floorId: String, number: Int = 0, name: String? = nil) throws -> RawClient.Response {
        try send("PUT", "/v1/properties/\(propertyId)/floors/\(floorId)", json: ["number": number, "name": name.map { $0 as Any } ?? NSNull()])
    }

    /// A property with one floor; returns the floor id.
    func makeFloor(property propertyId: String = newID()) throws -> (propertyId: String, floorId: String) {
        let floorId = newID()
        #expect(try putProperty(propertyId).status < 300)
        #expect(try putFloor(propertyId, floorId).status == 201)
        return (propertyId, floorId)
    }

    @discardableResult
    func putPlan(_ floorId: String, planId: String = newID(), mode: String, rooms: [(id: String, name: String?)],
                 outline: [[Double]] = [[0, 0], [4, 0], [4, 3]]) throws -> RawClient.Response {
        let roomValues: [[String: Any]] = rooms.map { ["id": $0.id, "name": $0.name.map { $0 as Any } ?? NSNull(), "outline": outline, "height": 2.5, "capture": ["k": 1]] }
        return try send("PUT", "/v1/floors/\(floorId)/plan", json: ["planId": planId, "mode": mode, "rooms": roomValues, "structure": ["walls": 4]])
    }

    @discardableResult
    func putPanorama(_ id: String, floorId: String, roomId: String? = nil, bytes: [UInt8], digest: String? = nil,
                     contentType: String = "image/jpeg") throws -> RawClient.Response {
        var headers = ["Content-Type": contentType]
        if let digest { headers["Repr-Digest"] = digest }
        let query = "floorId=\(floorId)" + (roomId.map { "&roomId=\($0)" } ?? "")
        return try send("PUT", "/v1/panoramas/\(id)?\(query)", body: bytes, headers: headers)
    }

    @discardableResult
    func putWorldMap(_ floorId: String, bytes: [UInt8]) throws -> RawClient.Response {
        try send("PUT", "/v1/floors/\(floorId)/worldmap", body: bytes, headers: ["Content-Type": "application/octet-stream"])
    }
}

extension InProcessClient {
    /// A property with one floor, made in process.
    func makeFloor() async throws -> (propertyId: String, floorId: String) {
        let (propertyId, floorId) = (newID(), newID())
        #expect(try await send("PUT", "/v1/properties/\(propertyId)", json: ["name": "Villa", "floorCount": 2]).status == 201)
        #expect(try await send("PUT", "/v1/properties/\(propertyId)/floors/\(floorId)", json: ["number": 0]).status == 201)
        return (propertyId, floorId)
    }
}

extension RawClient.Response {
    func string(_ key: String) -> String? { json?[key] as? String }
    func int(_ key: String) -> Int? { json?[key] as? Int }
    var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
    var rooms: [[String: Any]] { json?["rooms"] as? [[String: Any]] ?? [] }
}

/// The head of a PATCH sent by hand (to stall it, cut it, or hold it open).
func patchHead(_ location: String, token: String, offset: Int, length: Int, expectContinue: Bool = false) -> String {
    "PATCH \(location) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\nTus-Resumable: 1.0.0\r\n"
        + "Content-Type: application/offset+octet-stream\r\nUpload-Offset: \(offset)\r\nContent-Length: \(length)\r\n"
        + (expectContinue ? "Expect: 100-continue\r\n" : "") + "\r\n"
}

/// A tus upload of `image` begun by hand on `port`: created, its PATCH claimed (100 Continue)
/// and its first `sent` bytes sent, its connection left open.
func beginLongPatch(_ client: APIClient, port: UInt16, floorId: String, image: [UInt8], sent: Int) throws
    -> (writer: RawClient, location: String, panoramaId: String) {
    let panoramaId = newID()
    let location = try #require(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count).header("Location"))
    let writer = try RawClient(port: port)
    try writer.send(patchHead(location, token: try #require(client.token), offset: 0, length: image.count, expectContinue: true))
    #expect(try writer.readResponse(bodyExpected: false).status == 100)
    try writer.send(Array(image[0..<sent]))
    return (writer, location, panoramaId)
}

/// A tus upload of a 600,000-byte image on a new floor of `client`'s, created and its first
/// 100,000 bytes sent.
func uploadBegun(_ client: APIClient) throws -> (location: String, panoramaId: String, image: [UInt8]) {
    let (_, floorId) = try client.makeFloor()
    let image = imageBytes(600_000)
    let panoramaId = newID()
    let location = try #require(try client.tusCreate(panoramaId: panoramaId, floorId: floorId, length: image.count).header("Location"))
    #expect(try client.tusPatch(location, offset: 0, Array(image[0..<100_000])).status == 204)
    return (location, panoramaId, image)
}
