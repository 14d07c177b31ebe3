import Foundation
import SQLiteDB

extension NoughtyTours {
    /// Stores a property as `download(propertyId:)` would bring it from the server, through
    /// the same code (a synthetic tour document: `floorCount` floors of 10 rooms, `panoramas`
    /// panoramas on the first): the data `make bench` measures status against, without a
    /// server holding it. Package-only.
    package func seedDownloadedPropertyForBenchmark(name: String, floorCount: Int, panoramas: Int) async throws(NoughtyToursError) -> Property {
        let id = UUID().uuidString.lowercased()
        let floors = (0..<floorCount).map { number in
            let floorId = UUID().uuidString.lowercased()
            let rooms = (0..<10).map { index in
                RemoteTour.Room(id: UUID().uuidString.lowercased(), name: "Room \(index)", outline: "[[0,0],[4,0],[4,3]]", height: 2.5,
                                capture: #"{"walls":[1,2,3]}"#)
            }
            return RemoteTour.Floor(id: floorId, number: number, name: nil, planRevision: 1, structure: #"{"v":1}"#, rooms: rooms, worldMap: nil,
                                    panoramas: number > 0 ? [] : (0..<panoramas).map { index in
                                        RemoteTour.Panorama(id: UUID().uuidString.lowercased(), floorId: floorId, roomId: rooms[index % 10].id,
                                                            contentType: "image/jpeg", size: 1000, sha256: String(repeating: "0", count: 64),
                                                            createdAt: "2026-12-01T00:00:00Z")
                                    })
        }
        let tour = RemoteTour(property: RemoteProperty(id: id, name: name, tourId: UUID(), floorCount: floorCount, updatedAt: Date()),
                              metadata: [:], createdAt: "2026-12-01T00:00:00Z", floors: floors)
        return try await store.write { db in try Downloads.apply(db, tour, fetched: [:]).0 }
    }
}
