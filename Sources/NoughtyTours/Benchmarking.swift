import Foundation
import SQLiteDB

extension NoughtyTours {
    /// Fills a property with `count` panorama rows (no files) and their queue items, half of
    /// them uploaded: the data `make bench` measures status against. Package-only.
    package func seedPanoramasForBenchmark(_ property: Property, count: Int) async throws(NoughtyToursError) {
        try await store.write { db in
            guard let floor = try Records.floors(db, propertyId: property.id).first else { throw NoughtyToursError.notFound }
            for index in 0..<count {
                let id = UUID().uuidString.lowercased()
                try db.run("""
                    INSERT INTO panoramas (id, property_id, floor_id, path, content_type, size, sha256, created_at)
                    VALUES (?, ?, ?, ?, 'image/jpeg', 1000, '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                    """, id, property.id, floor.id, "/nonexistent/\(id)")
                let item = try Queue.add(db, property: property.id, kind: .panorama, entity: id, dependsOn: nil)
                if index % 2 == 0 { try db.run("UPDATE queue_items SET state = 'done', attempts = 1 WHERE id = ?", item) }
            }
        }
    }
}
