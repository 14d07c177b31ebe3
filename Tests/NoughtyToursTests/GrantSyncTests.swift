import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// docs/client.md "Grants": a library holding a grant, with the host's credential provider,
/// against a real toursd whose grants may live one second.
@Suite(.serialized, .hangGuard, .testThreads) struct GrantSyncTests {
    /// The host's provider: its backend (here a library holding the tenant's token, as an office
    /// station would) makes a grant naming the property the device works on, asked when the
    /// device's grant expires. Counts how often it was asked.
    private final class Provider: Sendable {
        let office: NoughtyTours
        let property = Mutex("")
        let calls = Atomic(0)
        let made = Mutex<[IssuedGrant]>([])

        init(_ office: NoughtyTours) { self.office = office }

        func next() async throws -> String {
            calls.add(1, ordering: .relaxed)
            let grant = try await office.createGrant(propertyIds: [property.withLock { $0 }], scopes: ["capture"], expiresInSeconds: 3600)
            made.withLock { $0.append(grant) }
            return grant.token
        }
    }

    /// A grant made with the server's tenant token: its id and token.
    private func grant(_ server: LiveServer, _ body: String) throws -> (id: String, token: String) {
        let made = try RawClient(port: server.port).request("POST", "/v1/grants", headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "application/json"],
                                                            body: Array(body.utf8))
        guard made.status == 201, let id = made.json?["id"] as? String, let token = made.json?["token"] as? String else {
            throw ToursdProcess.Failure(description: "POST /v1/grants: \(made.status) \(made.text)")
        }
        return (id, token)
    }

    @Test func theQueueDrainsAcrossAGrantsExpiryAskingTheProviderOnceAndARevokedGrantFailsForGood() async throws {
        let server = try LiveServer(environment: ["TOURSD_grantMinSeconds": "1"])
        defer { server.stop() }
        let first = try grant(server, #"{"scopes": ["capture"], "expiresInSeconds": 2}"#)
        let provider = Provider(try await makeSyncingLibrary(server: server.url, token: server.token))
        let tours = try await NoughtyTours(configuration: Configuration(server: server.url, token: first.token, storageDirectory: testDirectory("client"),
                                                                        sync: fastSync(resumableThreshold: 150_000),
                                                                        credentialProvider: { try await provider.next() }))
        // The first grant makes the property (it joins the grant); the host's next grant
        // names it. The first one runs out (during this, on a slow run, or after).
        let property = try await tours.properties.createProperty(name: "Granted", floorCount: 1)
        provider.property.withLock { $0 = property.id }
        try await drain(tours)
        try await waitUntil("the first grant to expire") {
            try RawClient(port: server.port).request("GET", "/v1/properties", headers: ["Authorization": "Bearer \(first.token)"]).status == 401
        }

        // Everything captured now drains with the expired grant in hand: each request that
        // finds it expired waits for the one renewal, and goes on in the same attempt.
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let rooms = try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
            CapturedRoom(name: "Hall", outline: [[0, 0], [4, 0], [4, 3]], height: 2.5),
        ], worldMap: try recordedFolder(bytes: 20_000, name: "map.bin").appendingPathComponent("map.bin"))
        let session = try await tours.panoramaCapture.session(room: rooms[0])
        for index in 0..<4 { try await capturePanorama(session, bytes: index == 0 ? 400_000 : 5_000 + index, seed: index + 2) }
        try await drain(tours)
        #expect(provider.calls.load(ordering: .relaxed) == 1)
        let items = try await queueItems(tours)
        #expect(items.allSatisfy { $0.state == "done" && $0.attempts == 1 }, "\(items)")
        #expect(try server.json("/v1/properties/\(property.id)/status")["panoramaCount"] as? Int == 4)

        // A revoked grant is a refusal: the item fails at its first attempt, and the provider
        // is not asked (a fresh grant is the host's decision, not the library's).
        let second = try #require(provider.made.withLock { $0 }.first)
        let revoked = try RawClient(port: server.port).request("DELETE", "/v1/grants/\(second.id)", headers: ["Authorization": "Bearer \(server.token)"])
        #expect(revoked.status == 204)
        try await capturePanorama(session, bytes: 6_000, seed: 9)
        try await drain(tours)
        let last = try #require(try await queueItems(tours, kind: .panorama).last)
        #expect(last.state == "failed" && last.attempts == 1, "\(last)")
        let status = try await tours.properties.status(of: property)
        #expect(status.panoramasFailed == 1)
        #expect(provider.calls.load(ordering: .relaxed) == 1)
    }
}
