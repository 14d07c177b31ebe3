import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NoughtyTours

/// docs/client.md "The walk's order": a device reorders a room's panoramas once they are
/// uploaded, the server's walk follows; a panorama the server lacks is its 400, offline the
/// transport's error.
@Suite(.serialized, .hangGuard, .testThreads) struct PanoramaOrderTests {
    @Test func theLibrarySetsTheWalksOrderOnTheServer() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let tours = try await makeSyncingLibrary(server: server.url, token: server.token)
        let property = try await tours.properties.createProperty(name: "Ordered", floorCount: 1)
        let floor = try #require(try await tours.properties.floors(of: property).first)
        let rooms = try await tours.structureCapture.apply(floor: floor, mode: .newScan, rooms: [
            CapturedRoom(name: "Living room", outline: [[0, 0], [6, 0], [6, 4], [0, 4]], height: 2.5),
        ])
        let session = try await tours.panoramaCapture.session(room: rooms[0])
        let first = try await capturePanorama(session, seed: 1), second = try await capturePanorama(session, seed: 2)
        try await drain(tours)

        #expect(try await tours.setPanoramaOrder([second, first], on: floor) == [second, first])
        let listed = try server.json("/v1/floors/\(floor.id)")
        #expect(listed["id"] as? String == floor.id)
        let tourId = try #require(try server.json("/v1/properties/\(property.id)")["tourId"] as? String)
        let panoramas = try #require(((try server.json("/v1/tours/\(tourId)")["floors"] as? [[String: Any]])?.first?["panoramas"]) as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: panoramas.compactMap { item in (item["id"] as? String).map { ($0, item["order"] as? Int) } }) == [second: 0, first: 1])

        // A panorama the server does not have: its 400, naming it; a malformed id never leaves.
        let unknown = UUID().uuidString.lowercased()
        do {
            _ = try await tours.setPanoramaOrder([unknown], on: floor)
            Issue.record("an order naming a panorama the server lacks was taken")
        } catch {
            if case .server(400, _, let message) = error { #expect(message.contains(unknown)) } else { Issue.record("the server's 400: \(error)") }
        }
        await #expect(throws: NoughtyToursError.invalidInput("each of panoramaIds must be a lowercase UUID, got \"Kitchen\"")) {
            try await tours.setPanoramaOrder(["Kitchen"], on: floor)
        }
        // Offline: the transport's error, nothing changed on the server.
        server.stop()
        do {
            _ = try await tours.setPanoramaOrder([first, second], on: floor)
            Issue.record("an order was set with the server down")
        } catch {
            if case .transport = error {} else { Issue.record("offline is a transport error: \(error)") }
        }
    }
}
