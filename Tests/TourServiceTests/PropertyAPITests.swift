import NTAPIModel
import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService

/// docs/api.md "Principles" and "Properties".
@Suite(.hangGuard, .testThreads) struct PropertyAPITests {
    @Test func firstPutCreatesWithATourIdThatNeverChanges() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let id = newID()
        let created = try client.putProperty(id, name: "Villa", floorCount: 2, metadata: ["ref": "A-1"])
        #expect(created.status == 201)
        let tourId = try #require(created.string("tourId"))
        #expect(Identifier.isValid(tourId))
        #expect(created.string("id") == id)
        #expect(created.string("name") == "Villa")
        #expect(created.int("floorCount") == 2)
        #expect(created.json?["metadata"] as? [String: String] == ["ref": "A-1"])
        // An identical re-send: 200, nothing changed.
        let again = try client.putProperty(id, name: "Villa", floorCount: 2, metadata: ["ref": "A-1"])
        #expect(again.status == 200)
        #expect(again.string("tourId") == tourId)
        #expect(again.string("updatedAt") == created.string("updatedAt"))
        // An update: 200, the tour id stays.
        let updated = try client.putProperty(id, name: "Villa Rosa", floorCount: 3)
        #expect(updated.status == 200)
        #expect(updated.string("tourId") == tourId)
        #expect(updated.string("name") == "Villa Rosa")
        #expect(updated.string("createdAt") == created.string("createdAt"))
        let fetched = try client.send("GET", "/v1/properties/\(id)")
        #expect(fetched.status == 200)
        #expect(fetched.string("tourId") == tourId)
        #expect(fetched.string("name") == "Villa Rosa")
        await harness.finish()
    }

    @Test func namesAreTrimmed() async throws {
        let harness = try await ServiceHarness()
        let response = try harness.client(harness.alpha).putProperty(newID(), name: "  Loft  ")
        #expect(response.string("name") == "Loft")
        await harness.finish()
    }

    /// Bad input: 400 with a message, and nothing stored.
    @Test(arguments: [
        (#"{"name": "   ", "floorCount": 1}"#, "name must be 1 to 200"),
        (#"{"name": "x", "floorCount": 0}"#, "floorCount must be 1 to 200"),
        (#"{"name": "x", "floorCount": 201}"#, "floorCount must be 1 to 200"),
        (#"{"name": "x", "floorCount": 1.5}"#, "floorCount must be an integer"),
        (#"{"name": "x", "floorCount": true}"#, "floorCount must be an integer"),
        (#"{"floorCount": 1}"#, "missing field name"),
        (#"{"name": "x", "floorCount": 1, "metadata": {"a": 1}}"#, "metadata.a must be a string"),
        (#"{"name": 5, "floorCount": 1}"#, "name must be a string"),
        (#"[1]"#, "must be a JSON object"),
        (#"{"name": "x", "#, "not valid JSON"),
    ])
    func badPropertiesAre400AndStoreNothing(body: String, message: String) async throws {
        let harness = try await ServiceHarness()
        let client = harness.inProcess(harness.alpha)
        let id = newID()
        let response = try await client.send("PUT", "/v1/properties/\(id)", body: Array(body.utf8))
        #expect(response.status == 400)
        #expect(response.errorCode == "bad_request")
        #expect(response.text.contains(message), "\(response.text)")
        #expect(try await client.send("GET", "/v1/properties/\(id)").status == 404)
        await harness.finish()
    }

    @Test func tooMuchMetadataIsRefused() async throws {
        let harness = try await ServiceHarness()
        let client = harness.inProcess(harness.alpha)
        func put(keys: Int) async throws -> RawClient.Response {
            let metadata = Dictionary(uniqueKeysWithValues: (0..<keys).map { ("k\($0)", "v") })
            return try await client.send("PUT", "/v1/properties/\(newID())", json: ["name": "Villa", "floorCount": 1, "metadata": metadata])
        }
        let response = try await put(keys: 65)
        #expect(response.status == 400)
        #expect(response.text.contains("more than 64 keys"))
        #expect(try await put(keys: 64).status == 201)
        await harness.finish()
    }

    @Test(arguments: ["not-a-uuid", "AAAAAAAA-1111-4111-8111-111111111111", "11111111-1111-4111-8111-11111111111"])
    func idsMustBeLowercaseUUIDs(id: String) async throws {
        let harness = try await ServiceHarness()
        let response = try await harness.inProcess(harness.alpha).send("PUT", "/v1/properties/\(id)", json: ["name": "Villa", "floorCount": 1])
        #expect(response.status == 400)
        #expect(response.text.contains("propertyId must be a lowercase UUID"))
        await harness.finish()
    }

    @Test func tokensAreRequiredAndRevocable() async throws {
        let harness = try await ServiceHarness()
        let anonymous = try harness.client(nil).send("GET", "/v1/properties")
        #expect(anonymous.status == 401)
        #expect(anonymous.errorCode == "unauthorized")
        #expect(anonymous.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        #expect(try harness.client("nt_wrong").send("GET", "/v1/properties").status == 401)
        let basic = try harness.client(nil).send("GET", "/v1/properties", headers: ["Authorization": "Basic Zm9vOmJhcg=="])
        #expect(basic.status == 401)
        // Revoked from the command line while the server runs: refused at once.
        let tokens = try await Admin.tokens(harness.config, logger: .init(sink: .init(fd: -1), level: .error))
        let betaToken = try #require(tokens.first { $0.tenant == "beta" })
        #expect(try harness.client(harness.beta).send("GET", "/v1/properties").status == 200)
        try await Admin.revokeToken(harness.config, id: betaToken.id, logger: .init(sink: .init(fd: -1), level: .error))
        #expect(try harness.client(harness.beta).send("GET", "/v1/properties").status == 401)
        // The daemon knows the token's tenant, and checks it with each GET's first read: a
        // revoked token is 401 whatever the route would have said (404, 400, or no read).
        let beta = try harness.client(harness.beta)
        for path in ["/v1/properties/\(newID())", "/v1/properties/NOT-A-UUID", "/v1/tours/\(newID())", "/v1/panoramas/\(newID())/preview?width=1"] {
            #expect(try beta.send("GET", path).status == 401, "\(path)")
        }
        #expect(try beta.send("HEAD", "/v1/uploads/\(newID())", headers: ["Tus-Resumable": "1.0.0"]).status == 401)
        #expect(try await Admin.tokens(harness.config, logger: .init(sink: .init(fd: -1), level: .error)).first { $0.id == betaToken.id }?.revoked == true)
        await harness.finish()
    }

    @Test func unauthorizedUploadIsRefusedBeforeTheBody() async throws {
        let harness = try await ServiceHarness(alone: true) // nginx answers 100 Continue itself
        let raw = try RawClient(port: harness.port)
        try raw.send("PUT /v1/panoramas/\(newID())?floorId=\(newID()) HTTP/1.1\r\nHost: t\r\nContent-Type: image/jpeg\r\nContent-Length: 50000000\r\nExpect: 100-continue\r\n\r\n")
        let response = try raw.readResponse()
        #expect(response.status == 401) // not 100: the body is never asked for
        await harness.finish()
    }

    @Test func listPagesThroughEveryPropertyOnce() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let ids = (0..<7).map { _ in newID() }
        for id in ids { try client.putProperty(id) }
        var seen: [String] = []
        var cursor: String?
        for _ in 0..<10 {
            let page = try client.send("GET", "/v1/properties?limit=3" + (cursor.map { "&after=\($0)" } ?? ""))
            #expect(page.status == 200)
            let items = page.json?["items"] as? [[String: Any]] ?? []
            #expect(items.count <= 3)
            seen += items.compactMap { $0["id"] as? String }
            cursor = page.json?["next"] as? String
            if cursor == nil { break }
        }
        #expect(seen == ids.sorted())
        #expect(try client.send("GET", "/v1/properties?limit=0").status == 400)
        #expect(try client.send("GET", "/v1/properties?limit=201").status == 400)
        #expect(try client.send("GET", "/v1/properties?after=bad").status == 400)
        await harness.finish()
    }

    @Test func statusSaysWhatTheServerHolds() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let roomA = newID(), roomB = newID()
        try client.putPlan(floorId, mode: "newScan", rooms: [(roomA, "Kitchen"), (roomB, nil)])
        let image = imageBytes(3000)
        try client.putPanorama(newID(), floorId: floorId, roomId: roomA, bytes: image)
        try client.putPanorama(newID(), floorId: floorId, bytes: imageBytes(500, seed: 2))
        let status = try client.send("GET", "/v1/properties/\(propertyId)/status")
        #expect(status.status == 200)
        #expect(status.string("propertyId") == propertyId)
        #expect(status.int("floorCount") == 1)
        #expect(status.int("roomCount") == 2)
        #expect(status.int("panoramaCount") == 2)
        #expect(status.int("panoramaBytes") == 3500)
        #expect(status.string("tourId") == (try client.send("GET", "/v1/properties/\(propertyId)").string("tourId")))
        await harness.finish()
    }

    @Test func deletingAPropertyRemovesEverythingAndItsFiles() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let roomId = newID()
        try client.putPlan(floorId, mode: "newScan", rooms: [(roomId, "Hall")])
        try client.putWorldMap(floorId, bytes: imageBytes(2000))
        let panoramaId = newID()
        try client.putPanorama(panoramaId, floorId: floorId, roomId: roomId, bytes: imageBytes(1000))
        #expect(harness.storedFiles().count == 2)
        #expect(try client.send("DELETE", "/v1/properties/\(propertyId)").status == 204)
        #expect(harness.storedFiles().isEmpty)
        #expect(try client.send("GET", "/v1/properties/\(propertyId)").status == 404)
        #expect(try client.send("GET", "/v1/floors/\(floorId)").status == 404)
        #expect(try client.send("GET", "/v1/panoramas/\(panoramaId)").status == 404)
        #expect(try client.send("DELETE", "/v1/properties/\(propertyId)").status == 404)
        await harness.finish()
    }

    @Test func theTourDocumentHoldsFloorsPlansRoomsAndPanoramas() async throws {
        let harness = try await ServiceHarness()
        let client = try harness.client(harness.alpha)
        let (propertyId, floorId) = try client.makeFloor()
        let roomId = newID(), panoramaId = newID()
        try client.putPlan(floorId, mode: "newScan", rooms: [(roomId, "Kitchen")])
        try client.putPanorama(panoramaId, floorId: floorId, roomId: roomId, bytes: imageBytes(800))
        let tourId = try #require(try client.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let tour = try client.send("GET", "/v1/tours/\(tourId)")
        #expect(tour.status == 200)
        #expect(tour.string("tourId") == tourId)
        #expect((tour.json?["property"] as? [String: Any])?["id"] as? String == propertyId)
        let floors = try #require(tour.json?["floors"] as? [[String: Any]])
        #expect(floors.count == 1)
        #expect((floors[0]["plan"] as? [String: Any])?["revision"] as? Int == 1)
        #expect((floors[0]["plan"] as? [String: Any])?["structure"] as? [String: Int] == ["walls": 4])
        #expect((floors[0]["rooms"] as? [[String: Any]])?.first?["name"] as? String == "Kitchen")
        // What another station needs to rebuild the floor: each room's capture output, the map.
        #expect((floors[0]["rooms"] as? [[String: Any]])?.first?["capture"] as? [String: Int] == ["k": 1])
        #expect(floors[0]["worldMap"] is NSNull)
        let map = imageBytes(300, seed: 2)
        try client.putWorldMap(floorId, bytes: map)
        let mapped = try #require((try client.send("GET", "/v1/tours/\(tourId)").json?["floors"] as? [[String: Any]])?.first?["worldMap"] as? [String: Any])
        #expect(mapped["sha256"] as? String == sha256Hex(map))
        #expect(mapped["size"] as? Int == map.count)
        #expect(try client.send("GET", try #require(mapped["url"] as? String)).body == map)
        let panoramas = try #require(floors[0]["panoramas"] as? [[String: Any]])
        #expect(panoramas.first?["contentUrl"] as? String == "/v1/panoramas/\(panoramaId)/content")
        #expect(panoramas.first?["sha256"] as? String == sha256Hex(imageBytes(800)))
        #expect(try client.send("GET", "/v1/tours/\(newID())").status == 404)
        await harness.finish()
    }
}
