import NTAPIModel
import Foundation
import NTSQLiteDB

extension NoughtyTours {
    /// Stores a property as `download(propertyId:)` would bring it from the server, through
    /// the same code (a synthetic tour document: `floorCount` floors of 10 rooms, `panoramas`
    /// panoramas on the first): the data `make bench` measures status against, without a
    /// server holding it. Package-only.
    package func seedDownloadedPropertyForBenchmark(name: String, floorCount: Int, panoramas: Int) async throws(NoughtyToursError) -> Property {
        func id() -> String { UUID().uuidString.lowercased() }
        let property = PropertyDocument(id: id(), tourId: id(), name: name, floorCount: floorCount, metadata: "{}",
                                        createdAt: "2026-12-01T00:00:00Z", updatedAt: "2026-12-01T00:00:00Z")
        let floors = (0..<floorCount).map { number in
            let floorId = id()
            let rooms = (0..<10).map { index in
                RoomDocument(id: id(), floorId: floorId, name: "Room \(index)", outline: "[[0,0],[4,0],[4,3]]", height: 2.5, capture: #"{"walls":[1,2,3]}"#)
            }
            let floor = FloorDocument(id: floorId, propertyId: property.id, number: number, name: nil, planRevision: 1, continuable: false, rooms: rooms)
            return TourDocument.Floor(floor: floor, plan: .init(revision: 1, structure: #"{"v":1}"#), worldMap: nil,
                                      panoramas: number > 0 ? [] : (0..<panoramas).map { index in
                                          PanoramaDocument(id: id(), propertyId: property.id, floorId: floorId, roomId: rooms[index % 10].id,
                                                           contentType: "image/jpeg", size: 1000, sha256: String(repeating: "0", count: 64),
                                                           createdAt: "2026-12-01T00:00:00Z")
                                      })
        }
        let tour = TourDocument(tourId: property.tourId, property: property, floors: floors)
        return try await store.write { db in try Downloads.apply(db, tour, fetched: [:]).0 }
    }

    /// When local storage last committed a write. Package-only (make bench).
    package var lastCommitForBenchmark: ContinuousClock.Instant? {
        get async { await store.lastCommit }
    }
}
