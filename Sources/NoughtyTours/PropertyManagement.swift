import NTAPIModel
import Foundation
import Synchronization
import NTSQLiteDB

/// Properties, their floors and rooms, and their status (the seed's PropertyManagement,
/// without the screens).
public struct PropertyManagement: Sendable {
    let store: LocalStore
    let remote: RemoteServer

    /// Creates a property and its floors at once, offline, and queues them for upload.
    public func createProperty(name: String, floorCount: Int, metadata: [String: String] = [:]) async throws(NoughtyToursError) -> Property {
        // The server's rules (docs/api.md), the same code, so that nothing is queued that it would refuse.
        let input: PropertyInput
        do {
            input = try PropertyInput(name: name, floorCount: floorCount, metadata: metadata).validated()
        } catch {
            throw .invalidInput(error.message)
        }
        var writer = JSONWriter()
        writer.object(input.metadata)
        let encoded = writer.bytes
        let trimmed = input.name
        let id = UUID().uuidString.lowercased()
        try await store.write { db in
            try db.run("INSERT INTO properties (id, name, floor_count, metadata, created_at) VALUES (?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                       id, trimmed, floorCount, String(decoding: encoded, as: UTF8.self))
            let propertyItem = try Queue.add(db, property: id, kind: .property, entity: id, dependsOn: nil)
            for number in 0..<floorCount {
                let floor = UUID().uuidString.lowercased()
                try db.run("INSERT INTO floors (id, property_id, number) VALUES (?, ?, ?)", floor, id, number)
                try Queue.add(db, property: id, kind: .floor, entity: floor, dependsOn: propertyItem)
            }
        }
        return Property(id: id, name: trimmed)
    }

    /// The property, or nil for an unknown or deleted id.
    public func property(id: String) async throws(NoughtyToursError) -> Property? {
        try await store.read { db in
            try db.first("SELECT id, name FROM properties WHERE id = ?", id).map { Property(id: try $0.decode(0, as: String.self), name: try $0.decode(1, as: String.self)) }
        }
    }

    public func properties() async throws(NoughtyToursError) -> [Property] {
        try await store.read { db in
            try db.query("SELECT id, name FROM properties ORDER BY created_at, id").map { Property(id: try $0.decode(0, as: String.self), name: try $0.decode(1, as: String.self)) }
        }
    }

    /// The property's floors; `notFound` for a deleted property.
    public func floors(of property: Property) async throws(NoughtyToursError) -> [Floor] {
        try await store.read { db in
            try Records.requireProperty(db, property.id)
            return try Records.floors(db, propertyId: property.id)
        }
    }

    /// The floor's rooms in plan order; `notFound` for a deleted floor.
    public func rooms(of floor: Floor) async throws(NoughtyToursError) -> [Room] {
        try await store.read { db in
            try Records.requireFloor(db, floor.id)
            return try Records.rooms(db, floorId: floor.id)
        }
    }

    /// Deletes the property and everything under it locally, and queues its deletion on the
    /// server (its other queued uploads are dropped). Throws `notFound` for an unknown one.
    public func deleteProperty(_ property: Property) async throws(NoughtyToursError) {
        let files = try await store.write { db -> [String] in
            try Records.requireProperty(db, property.id)
            let files = try db.query("SELECT path FROM panoramas WHERE property_id = ? UNION ALL SELECT world_map_path FROM floors WHERE property_id = ? AND world_map_path IS NOT NULL",
                                     property.id, property.id).compactMap { try $0.decodeIfPresent(0, as: String.self) }
            try db.run("DELETE FROM properties WHERE id = ?", property.id)
            // Uploads not yet sent are dropped; one in flight finishes first (the deletion waits
            // for it), so the server never gets a property back after its deletion.
            try db.run("DELETE FROM queue_items WHERE property_id = ? AND state NOT IN ('done', 'inflight')", property.id)
            try Queue.add(db, property: property.id, kind: .deleteProperty, entity: property.id, dependsOn: nil)
            return files
        }
        // A downloaded panorama has no local file (its path is empty).
        await store.removeFiles(files.filter { !$0.isEmpty })
    }

    /// The property's status, from local storage only.
    public func status(of property: Property) async throws(NoughtyToursError) -> PropertyStatus {
        guard let status = try await store.read({ db in try Records.status(db, propertyId: property.id) }) else { throw .notFound }
        return status
    }

    /// The tenant's properties on the server, every page of them (a station that did not
    /// create a property finds it here, to `download` it).
    public func remoteProperties() async throws(NoughtyToursError) -> [RemoteProperty] {
        var properties: [RemoteProperty] = []
        var after: String?
        // Bounded: each page moves the cursor on, and a cursor seen twice ends the walk.
        var seen: Set<String> = []
        for _ in 0..<100_000 {
            let page = try await remote.document("/v1/properties?limit=200" + (after.map { "&after=\($0)" } ?? ""), PropertyPage.init)
            for item in page.items {
                do {
                    properties.append(try RemoteProperty(item))
                } catch {
                    throw .transport("the server listed a property that is not docs/api.md's: \(error.message)")
                }
            }
            guard let next = page.next, !page.items.isEmpty, seen.insert(next).inserted else { break }
            after = next
        }
        return properties
    }

    /// Brings the server's property into local storage: the property, its floors, their
    /// plans and rooms with the server's ids and names, each floor's world map, and its
    /// panoramas (as uploaded: their images stay on the server). Afterwards the property's
    /// status is synced and a floor the server offers for continuing can be continued here.
    /// Again later, it refreshes what the server changed; local work still queued is kept.
    /// `notFound` when the server has no such property.
    @discardableResult
    public func download(propertyId: String) async throws(NoughtyToursError) -> Property {
        guard let uuid = UUID(uuidString: propertyId) else { throw .invalidInput("a property id is a UUID, not \(propertyId)") }
        let id = uuid.uuidString.lowercased()
        let listed = try await remote.document("/v1/properties/\(id)", PropertyDocument.init)
        let tour = try await remote.document("/v1/tours/\(listed.tourId)", TourDocument.init)
        try Downloads.check(tour)
        let wanted = try await store.read { db in try Downloads.worldMapsToFetch(db, tour) }
        var fetched: [String: StoredMap] = [:]
        do throws(NoughtyToursError) {
            for (floorId, map) in wanted {
                let path = StoredMap.newPath(store.directory, floorId: floorId)
                fetched[floorId] = StoredMap(path: path, sha256: map.sha256)
                try await remote.download(map.url, to: path)
                let digest = try await store.files { () throws(NoughtyToursError) in
                    let (_, digest) = try LocalFiles.digest(of: path)
                    try LocalFiles.syncDirectory(of: path)
                    return digest
                }
                guard digest == map.sha256 else { throw .transport("floor \(floorId)'s world map arrived with another digest") }
            }
            let (property, obsolete) = try await store.write { [fetched] db in try Downloads.apply(db, tour, fetched: fetched) }
            await store.removeFiles(obsolete)
            return property
        } catch {
            await store.removeFiles(fetched.values.map(\.path))
            throw error
        }
    }

    /// The property's items that failed at least once and are not done, each with its last
    /// error and whether the queue will try it again; from local storage (it survives a
    /// restart). Throws `notFound` for an unknown or deleted property.
    public func uploadFailures(of property: Property) async throws(NoughtyToursError) -> [UploadFailure] {
        try await store.read { db in
            try Records.requireProperty(db, property.id)
            return try Queue.failures(db, propertyId: property.id)
        }
    }

    /// The current status at once, then one value per change of it (never the same value
    /// twice in a row), driven by the database's own change notifications. Finishes when the
    /// property is deleted or the iterating task is cancelled, leaving no observer behind.
    public func statusUpdates(for property: Property) -> AsyncStream<PropertyStatus> {
        let stream = StatusStreams.next()
        let store = self.store
        return AsyncStream { continuation in
            continuation.onTermination = { _ in
                Task { await store.stopObserving(stream: stream) }
            }
            Task { await store.followStatus(of: property.id, stream: stream, continuation) }
        }
    }
}

/// Numbers for status streams.
enum StatusStreams {
    private static let counter = Atomic<Int>(0)
    static func next() -> Int { counter.wrappingAdd(1, ordering: .relaxed).newValue }
}

extension LocalStore {
    /// Yields the status now and after every committed change that alters it. A read that
    /// fails (storage failing for a moment) yields nothing and the stream goes on: it ends
    /// only when the property is gone.
    func followStatus(of propertyId: String, stream: Int, _ continuation: AsyncStream<PropertyStatus>.Continuation) {
        let last = LastStatus()
        guard refresh(propertyId, last, continuation) else { return }
        // Called on this actor, inside the write that committed (the observer is removed when
        // the stream ends, which also breaks the reference to self).
        let registered = observe(stream: stream) { tables in
            guard !tables.isDisjoint(with: Records.statusTables) else { return }
            self.refresh(propertyId, last, continuation)
        }
        if !registered { continuation.finish() }
    }

    /// Yields the status if it changed; false (and the stream finished) once the property is gone.
    @discardableResult
    private func refresh(_ propertyId: String, _ last: LastStatus, _ continuation: AsyncStream<PropertyStatus>.Continuation) -> Bool {
        let status: PropertyStatus?
        do {
            status = try read { db in try Records.status(db, propertyId: propertyId) }
        } catch {
            return true
        }
        guard let status else {
            continuation.finish() // deleted
            return false
        }
        if status != last.value {
            last.value = status
            continuation.yield(status)
        }
        return true
    }
}

/// The last value a status stream yielded; touched only on the store's actor.
final class LastStatus: @unchecked Sendable {
    var value: PropertyStatus?
}
