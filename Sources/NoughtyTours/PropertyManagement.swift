import Foundation
import Synchronization
import SQLiteDB

/// Properties, their floors and rooms, and their status (the seed's PropertyManagement,
/// without the screens).
public struct PropertyManagement: Sendable {
    let store: LocalStore

    static let maxMetadataKeys = 64
    static let maxMetadataBytes = 16 * 1024

    /// Creates a property and its floors at once, offline, and queues them for upload.
    public func createProperty(name: String, floorCount: Int, metadata: [String: String] = [:]) async throws(NoughtyToursError) -> Property {
        // The server's rules (API.md), checked here so that nothing is queued that it would refuse.
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(trimmed.count) else { throw .invalidInput("a property name is 1 to 200 characters") }
        guard trimmed.utf8.count <= 800 else { throw .invalidInput("a property name is at most 800 bytes in UTF-8") }
        guard !Self.hasControlCharacters(trimmed) else { throw .invalidInput("a property name must not contain control characters") }
        guard (1...200).contains(floorCount) else { throw .invalidInput("floorCount must be 1 to 200") }
        guard metadata.count <= Self.maxMetadataKeys else { throw .invalidInput("metadata has more than \(Self.maxMetadataKeys) keys") }
        for (key, value) in metadata {
            guard (1...128).contains(key.utf8.count), !Self.hasControlCharacters(key) else {
                throw .invalidInput("a metadata key is 1 to 128 bytes in UTF-8, without control characters")
            }
            guard value.utf8.count <= 4096 else { throw .invalidInput("metadata.\(key) is longer than 4096 bytes") }
        }
        let encoded = (try? JSONSerialization.data(withJSONObject: metadata, options: [.sortedKeys])) ?? Data()
        guard encoded.count <= Self.maxMetadataBytes else { throw .invalidInput("metadata is larger than \(Self.maxMetadataBytes) bytes") }
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

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// The property, or nil for an unknown or deleted id.
    public func property(id: String) async throws(NoughtyToursError) -> Property? {
        try await store.read { db in
            try db.first("SELECT id, name FROM properties WHERE id = ?", id).map { Property(id: $0[0].string ?? "", name: $0[1].string ?? "") }
        }
    }

    public func properties() async throws(NoughtyToursError) -> [Property] {
        try await store.read { db in
            try db.query("SELECT id, name FROM properties ORDER BY created_at, id").map { Property(id: $0[0].string ?? "", name: $0[1].string ?? "") }
        }
    }

    public func floors(of property: Property) async throws(NoughtyToursError) -> [Floor] {
        try await store.read { db in try Records.floors(db, propertyId: property.id) }
    }

    public func rooms(of floor: Floor) async throws(NoughtyToursError) -> [Room] {
        try await store.read { db in try Records.rooms(db, floorId: floor.id) }
    }

    /// Deletes the property and everything under it locally, and queues its deletion on the
    /// server (its other queued uploads are dropped). Throws `notFound` for an unknown one.
    public func deleteProperty(_ property: Property) async throws(NoughtyToursError) {
        let files = try await store.write { db -> [String] in
            guard try db.first("SELECT 1 FROM properties WHERE id = ?", property.id) != nil else { throw NoughtyToursError.notFound }
            let files = try db.query("SELECT path FROM panoramas WHERE property_id = ? UNION ALL SELECT world_map_path FROM floors WHERE property_id = ? AND world_map_path IS NOT NULL",
                                     property.id, property.id).compactMap { $0[0].string }
            try db.run("DELETE FROM properties WHERE id = ?", property.id)
            // Uploads not yet sent are dropped; one in flight finishes first (the deletion waits
            // for it), so the server never gets a property back after its deletion.
            try db.run("DELETE FROM queue_items WHERE property_id = ? AND state NOT IN ('done', 'inflight')", property.id)
            try Queue.add(db, property: property.id, kind: .deleteProperty, entity: property.id, dependsOn: nil)
            return files
        }
        for file in files { try? FileManager.default.removeItem(atPath: file) }
    }

    /// The property's status, from local storage only.
    public func status(of property: Property) async throws(NoughtyToursError) -> PropertyStatus {
        guard let status = try await store.read({ db in try Records.status(db, propertyId: property.id) }) else { throw .notFound }
        return status
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
    /// Yields the status now and after every committed change that alters it.
    func followStatus(of propertyId: String, stream: Int, _ continuation: AsyncStream<PropertyStatus>.Continuation) {
        guard let current = try? read({ db in try Records.status(db, propertyId: propertyId) }) else {
            continuation.finish()
            return
        }
        continuation.yield(current)
        let last = LastStatus(current)
        // Called on this actor, inside the write that committed (the observer is removed when
        // the stream ends, which also breaks the reference to self).
        let registered = observe(stream: stream) { tables in
            guard !tables.isDisjoint(with: Records.statusTables) else { return }
            self.refresh(propertyId, last, continuation)
        }
        if !registered { continuation.finish() }
    }

    private func refresh(_ propertyId: String, _ last: LastStatus, _ continuation: AsyncStream<PropertyStatus>.Continuation) {
        guard let status = try? read({ db in try Records.status(db, propertyId: propertyId) }) else {
            continuation.finish() // deleted
            return
        }
        if status != last.value {
            last.value = status
            continuation.yield(status)
        }
    }
}

/// The last value a status stream yielded; touched only on the store's actor.
final class LastStatus: @unchecked Sendable {
    var value: PropertyStatus
    init(_ value: PropertyStatus) { self.value = value }
}
