import NTAPIModel
import NTLogging
import NTServiceModel
import NTSQLiteDB

/// A resumable upload's row.
package struct UploadRecord: Equatable, Sendable {
    package var id: String
    package var panoramaId: String
    package var floorId: String
    package var roomId: String?
    package var position: PanoramaPosition?
    package var contentType: String
    package var length: Int64
    package var offset: Int64
    package var declaredSHA256: String?
    package var metadata: String
    package var finished: Bool
    package var expiresAt: Int64
    /// False for a draft upload whose client has not said its length: `length` is then the
    /// most it may reach.
    package var lengthKnown: Bool
    /// A draft upload, complete only once its client says so (never at `length` alone).
    package var awaitsCompletion: Bool
    /// The grant whose holder began it; nil for a tenant token.
    package var grantId: String?

    /// Whether every byte is in and nothing more is awaited: the upload becomes its panorama.
    package func isComplete(at offset: Int64) -> Bool { offset == length && !awaitsCompletion }

    init(_ row: Row) throws(StorageError) {
        id = try row.decode("id", as: String.self)
        panoramaId = try row.decode("panorama_id", as: String.self)
        floorId = try row.decode("floor_id", as: String.self)
        roomId = try row.decodeIfPresent("room_id", as: String.self)
        position = try PanoramaPosition(row)
        contentType = try row.decode("content_type", as: String.self)
        length = try row.decode("length", as: Int64.self)
        offset = try row.decode("offset", as: Int64.self)
        declaredSHA256 = try row.decodeIfPresent("declared_sha256", as: String.self)
        metadata = try row.decode("metadata", as: String.self)
        finished = try row.decode("state", as: String.self) == "finished"
        expiresAt = try row.decode("expires_at", as: Int64.self)
        lengthKnown = try row.decode("length_known", as: Int64.self) != 0
        awaitsCompletion = try row.decode("awaits_completion", as: Int64.self) == 1
        grantId = try row.decodeIfPresent("grant_id", as: String.self)
    }

    /// Whether `wanted` asks for this upload again (its answer was lost): the same principal,
    /// floor, length and metadata. An id alone proves nothing: anyone may name it.
    package func isRepeated(by wanted: UploadRequest) -> Bool {
        grantId == wanted.grantId && floorId == wanted.floorId && roomId == wanted.roomId && length == wanted.length
            && lengthKnown == wanted.lengthKnown && metadata == wanted.metadataHeader && contentType == wanted.contentType
            && declaredSHA256 == wanted.declaredSHA256 && position == wanted.position
    }
}

/// The SQL of resumable uploads.
package enum UploadStore {
    package static func upload(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> UploadRecord? {
        try await db.first("SELECT * FROM uploads WHERE tenant_id = ? AND id = ?", tenant, id).map(UploadRecord.init)
    }

    package static func receiving(_ db: any SQLConnection, _ tenant: Int64, panoramaId: String) async throws -> UploadRecord? {
        try await db.first("SELECT * FROM uploads WHERE tenant_id = ? AND panorama_id = ? AND state = 'receiving'", tenant, panoramaId)
            .map(UploadRecord.init)
    }

    /// How many unfinished, unexpired uploads a tenant has, and the bytes they reserve.
    package static func unfinished(_ db: any SQLConnection, _ tenant: Int64, now: Int64) async throws -> (count: Int, bytes: Int64) {
        let row = try await db.first("""
            SELECT count(*) AS n, coalesce(sum(length), 0) AS bytes FROM uploads
            WHERE tenant_id = ? AND state = 'receiving' AND expires_at > ?
            """, tenant, now)
        return (try row?.decode("n", as: Int.self) ?? 0, try row?.decode("bytes", as: Int64.self) ?? 0)
    }

    package static func create(_ db: any SQLConnection, _ tenant: Int64, id: String, _ request: UploadRequest, expiresAt: Int64, at now: WallClockTime) async throws -> UploadRecord {
        try await db.run("""
            INSERT INTO uploads (tenant_id, id, panorama_id, floor_id, room_id, content_type, length, declared_sha256, metadata,
                                 state, created_at, expires_at, length_known, awaits_completion, x, y, heading, camera_height, grant_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'receiving', ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, tenant, id, request.panoramaId, request.floorId, request.roomId, request.contentType, request.length,
                   request.declaredSHA256, request.metadataHeader, Timestamp.text(now), expiresAt, request.lengthKnown, request.awaitsCompletion,
                   request.position?.x, request.position?.y, request.position?.heading, request.position?.height, request.grantId)
        guard let created = try await upload(db, tenant, id) else { throw StorageError(.corrupt, "upload vanished after insert") }
        return created
    }

    /// The one rule of what an upload still takes (docs/security.md "Revoking a grant"): its
    /// bytes, length and completion are recorded only while the grant that began it, if one
    /// did, is neither revoked nor gone, checked in the statement that records them. A PATCH
    /// in flight when its grant is revoked stops at its next durable step, unacknowledged.
    static let takesBytes = """
        (grant_id IS NULL OR EXISTS (SELECT 1 FROM grants WHERE grants.tenant_id = uploads.tenant_id AND grants.id = uploads.grant_id \
        AND grants.revoked_at IS NULL))
        """

    /// Records a durable offset, and pushes the expiry out; false when the upload takes no
    /// more bytes (or is no longer receiving). Durable offsets only grow, so the row only moves
    /// forward: an interrupted PATCH's offset, recorded late (after a newer PATCH's), cannot
    /// take it back.
    package static func setOffset(_ db: any SQLConnection, _ tenant: Int64, _ id: String, offset: Int64, expiresAt: Int64) async throws -> Bool {
        let sql = db.dialect.pick(sqlite: "UPDATE uploads SET \"offset\" = max(\"offset\", ?), expires_at = ?",
                                  postgresql: "UPDATE uploads SET \"offset\" = greatest(\"offset\", ?), expires_at = ?") + receivingAndTakingBytes
        return try await db.run(sql, offset, expiresAt, tenant, id) == 1
    }

    /// A receiving upload's offset, moved forward only (a durable step of a long PATCH); false
    /// as `setOffset`.
    package static func advanceOffset(_ db: any SQLConnection, _ tenant: Int64, _ id: String, to offset: Int64) async throws -> Bool {
        let sql = db.dialect.pick(sqlite: "UPDATE uploads SET \"offset\" = max(\"offset\", ?)",
                                  postgresql: "UPDATE uploads SET \"offset\" = greatest(\"offset\", ?)") + receivingAndTakingBytes
        return try await db.run(sql, offset, tenant, id) == 1
    }

    /// Records a draft upload's length, said by its client, while it is not known yet; false
    /// when nothing was recorded.
    package static func recordLength(_ db: any SQLConnection, _ tenant: Int64, _ id: String, length: Int64) async throws -> Bool {
        let sql = "UPDATE uploads SET length = ?, length_known = 1" + receivingAndTakingBytes + " AND length_known = 0"
        return try await db.run(sql, length, tenant, id) == 1
    }

    /// A draft upload whose client said it is complete, with all its bytes durable at
    /// `offset`: its length is that offset, and it no longer awaits anything (so a crash now
    /// still finishes it at the next HEAD). False when nothing was recorded.
    package static func markComplete(_ db: any SQLConnection, _ tenant: Int64, _ id: String, offset: Int64) async throws -> Bool {
        let sql = "UPDATE uploads SET \"offset\" = ?, length = ?, length_known = 1, awaits_completion = 0" + receivingAndTakingBytes
        return try await db.run(sql, offset, offset, tenant, id) == 1
    }

    /// Whether the upload still takes bytes (`takesBytes`), read in the transaction that would
    /// make it its panorama.
    package static func takesBytes(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> Bool {
        let sql = "SELECT 1 FROM uploads" + receivingAndTakingBytes
        return try await db.first(sql, tenant, id) != nil
    }

    /// The rows of the recording statements above: the tenant's upload (two parameters),
    /// receiving, and taking bytes.
    private static let receivingAndTakingBytes = " WHERE tenant_id = ? AND id = ? AND state = 'receiving' AND " + takesBytes

    /// Sets the offset back to what the partial file really holds (it lost bytes in a crash).
    package static func repairOffset(_ db: any SQLConnection, _ tenant: Int64, _ id: String, offset: Int64) async throws {
        try await db.run("UPDATE uploads SET \"offset\" = ? WHERE tenant_id = ? AND id = ? AND state = 'receiving'", offset, tenant, id)
    }

    package static func markFinished(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws {
        try await db.run("UPDATE uploads SET state = 'finished', \"offset\" = length WHERE tenant_id = ? AND id = ?", tenant, id)
    }

    package static func delete(_ db: any SQLConnection, _ tenant: Int64, _ id: String) async throws -> Bool {
        try await db.run("DELETE FROM uploads WHERE tenant_id = ? AND id = ?", tenant, id) == 1
    }

    /// Removes uploads expired at `now`; returns the keys of partial files to remove.
    /// An unfinished one whose property is still there says so in the events.
    package static func deleteExpired(_ db: any SQLConnection, at now: WallClockTime) async throws -> [BlobKey] {
        let expired = try await db.query("""
            SELECT u.tenant_id, u.id, u.state, u.panorama_id, u.floor_id, f.property_id FROM uploads u
            LEFT JOIN floors f ON f.tenant_id = u.tenant_id AND f.id = u.floor_id WHERE u.expires_at <= ?
            """, now.seconds)
        try await db.run("DELETE FROM uploads WHERE expires_at <= ?", now.seconds)
        for row in expired where try row.decode("state", as: String.self) == "receiving" {
            // No property: the upload's floor went with it, and so does the event.
            guard let property = try row.decodeIfPresent("property_id", as: String.self) else { continue }
            let tenant = try row.decode("tenant_id", as: Int64.self), upload = try row.decode("id", as: String.self)
            let panorama = try row.decode("panorama_id", as: String.self), floor = try row.decode("floor_id", as: String.self)
            try await EventStore.append(db, tenant, .uploadExpired, property: property, at: now) { data in
                data.key("uploadId"); data.string(upload)
                data.key("panoramaId"); data.string(panorama)
                data.key("floorId"); data.string(floor)
            }
        }
        return try expired.filter { try $0.decode("state", as: String.self) == "receiving" }
            .map { BlobKey(tenant: try $0.decode("tenant_id", as: Int64.self), kind: .upload, id: try $0.decode("id", as: String.self)) }
    }
}
