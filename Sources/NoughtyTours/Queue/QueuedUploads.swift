import Foundation
import NTSQLiteDB

/// An item of the upload queue not yet on the server, as a host lists it (`tours queue list`).
public struct QueuedUpload: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Waiting its turn, a backoff, or an item it comes after.
        case queued
        /// Being sent now (by this process or another).
        case uploading
        /// Failed: it stays until `sync()` forgives it, or `dropUpload` gives it up.
        case failed
    }

    /// The queue's number for the item: what `dropUpload` takes.
    public let id: Int64
    public let item: UploadItem
    public let state: State
    public let attempts: Int
    public let lastError: NoughtyToursError?
    /// The queue number of an item not yet uploaded that this one waits for.
    public let waitingFor: Int64?
    /// What a panorama's upload sends; 0 for the others.
    public let bytes: Int64
}

extension NoughtyTours {
    /// Every item of the upload queue not yet on the server, in the order they go.
    public func queuedUploads() async throws(NoughtyToursError) -> [QueuedUpload] {
        try await store.read { db in try Queue.listed(db) }
    }

    /// Gives up an item the server will not take (a panorama too large for it, a plan it
    /// refuses): it leaves the queue, and what waited for it goes on without it. A panorama
    /// given up leaves local storage too (the property's status then counts without it). A
    /// property's or floor's own item cannot be given up alone (`deleteProperty` removes
    /// the property: `invalidInput`); one being uploaded cannot either (`busy`); `notFound`
    /// for an item not in the queue (done, or never there). Returns the item dropped.
    @discardableResult
    public func dropUpload(_ id: Int64) async throws(NoughtyToursError) -> QueuedUpload {
        let (dropped, files) = try await store.write { db throws -> (QueuedUpload, [String]) in
            guard let item = try Queue.listed(db, id: id) else { throw NoughtyToursError.notFound }
            switch item.item.kind {
            case .property, .floor:
                throw NoughtyToursError.invalidInput("upload \(id) creates the \(item.item.kind == .property ? "property" : "floor") itself, which everything "
                                                     + "else of the property needs: delete the property instead (tours property delete \(item.item.propertyId))")
            case .plan, .worldMap, .panorama, .propertyDeletion:
                break
            }
            guard item.state != .uploading else {
                throw NoughtyToursError.busy("upload \(id) is being sent now: stop the sync that sends it, then drop it")
            }
            let files = try Queue.drop(db, id: id)
            return (item, files)
        }
        await store.removeFiles(files)
        return dropped
    }

    /// Removes the local files of panoramas uploaded more than `age` ago (they are on the
    /// server: local storage need not keep them). Their rows stay, so status counts are
    /// unchanged. Returns how many files went and their bytes.
    @discardableResult
    public func pruneUploadedPanoramas(olderThan age: Duration) async throws(NoughtyToursError) -> (files: Int, bytes: Int64) {
        let cutoff = Date().timeIntervalSince1970 - age.timeInterval
        let pruned = try await store.write { db in try Queue.pruneUploaded(db, before: cutoff) }
        await store.removeFiles(pruned.map(\.path))
        return (pruned.count, pruned.reduce(0) { $0 + $1.size })
    }
}

extension Queue {
    /// The items not done, oldest first: read through `queue_by_state`, never the done items
    /// a station's history piles up.
    static func listed(_ db: Database) throws -> [QueuedUpload] {
        try uploads(db.query(selectUploads + " WHERE q.state IN ('pending', 'inflight', 'failed') ORDER BY q.id"))
    }

    /// The item of `id` when it is not done.
    static func listed(_ db: Database, id: Int64) throws -> QueuedUpload? {
        try uploads(db.query(selectUploads + " WHERE q.id = ? AND q.state != 'done'", id)).first
    }

    private static let selectUploads = """
        SELECT q.id, q.property_id, q.kind, q.entity_id, q.state, q.attempts, q.last_error,
               (SELECT d.id FROM queue_items AS d WHERE d.id = q.depends_on AND d.state != 'done'),
               coalesce((SELECT p.size FROM panoramas AS p WHERE q.kind = 'panorama' AND p.id = q.entity_id), 0)
        FROM queue_items AS q
        """

    private static func uploads(_ rows: [Row]) throws -> [QueuedUpload] {
        try rows.compactMap { row in
            let number = try row.decode(0, as: Int64.self)
            guard let kind = Kind(rawValue: try row.decode(2, as: String.self)) else { return nil }
            let state: QueuedUpload.State = switch try row.decode(4, as: String.self) {
            case "inflight": .uploading
            case "failed": .failed
            default: .queued
            }
            return QueuedUpload(id: number, item: UploadItem(propertyId: try row.decode(1, as: String.self), kind: kind.uploadKind, entityId: try row.decode(3, as: String.self)),
                                state: state, attempts: try row.decode(5, as: Int.self), lastError: try row.decodeIfPresent(6, as: String.self).map(StoredError.decode),
                                waitingFor: try row.decodeIfPresent(7, as: Int64.self), bytes: try row.decode(8, as: Int64.self))
        }
    }

    /// Takes an item out of the queue; what depended on it depends on what it depended on. A
    /// panorama's item takes the panorama with it: returns the file no row names any more.
    static func drop(_ db: Database, id: Int64) throws -> [String] {
        guard let row = try db.first("SELECT kind, entity_id, depends_on FROM queue_items WHERE id = ?", id) else { return [] }
        try db.run("UPDATE queue_items SET depends_on = ? WHERE depends_on = ?", try row.decode(2, as: SQLValue.self), id)
        try db.run("DELETE FROM queue_items WHERE id = ?", id)
        guard try row.decodeIfPresent(0, as: String.self) == Kind.panorama.rawValue, let panorama = try row.decodeIfPresent(1, as: String.self),
              let path = try db.first("SELECT path FROM panoramas WHERE id = ?", panorama)?.decodeIfPresent(0, as: String.self) else { return [] }
        try db.run("DELETE FROM panoramas WHERE id = ?", panorama)
        return path.isEmpty ? [] : [path]
    }

    /// The panoramas whose upload finished before `before` (unix seconds) and that have no
    /// upload left: their local path is cleared (as a downloaded panorama's is); returns the
    /// files to remove. Read through `panoramas_with_files`: only the panoramas that still
    /// have a file here, not every one the station ever held.
    static func pruneUploaded(_ db: Database, before: Double) throws -> [(path: String, size: Int64)] {
        let rows = try db.query("""
            SELECT p.id, p.path, p.size FROM panoramas AS p
            WHERE p.path != ''
              AND EXISTS (SELECT 1 FROM queue_items AS q WHERE q.kind = 'panorama' AND q.entity_id = p.id AND q.state = 'done' AND q.done_at < ?)
              AND NOT EXISTS (SELECT 1 FROM queue_items AS q WHERE q.kind = 'panorama' AND q.entity_id = p.id AND q.state != 'done')
            """, before)
        for row in rows { try db.run("UPDATE panoramas SET path = '' WHERE id = ?", try row.decode(0, as: SQLValue.self)) }
        return try rows.map { (path: try $0.decode(1, as: String.self), size: try $0.decode(2, as: Int64.self)) }
    }
}
