import NTAPIModel
import NTObjectStorage
import NTServiceModel
import NTSQLKit

/// What a round of the bucket's sweep removes, decided without I/O: objects no row names that
/// are older than the grace (another daemon may be between placing an object and committing
/// its row), and multipart uploads left by a daemon stopped in the middle of one. No row ever
/// names a multipart upload in progress (each lives inside one request), but its date cannot
/// be trusted (moto dates every one 2010-11-10): an upload is aborted once this daemon has
/// seen it for the grace, so after a restart within that period.
package enum BucketSweepPlan {
    /// The objects a sweep lists at once.
    package static let pageSize = 1000

    /// The blob an object is, or nil for a name toursd does not make (left alone). A
    /// resumable upload's segments are its upload's; a panorama's previews are its own.
    package static func key(of name: String) -> BlobKey? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 4, parts[1] == "previews", let tenant = Int64(parts[0]), !parts[2].isEmpty, !parts[3].isEmpty {
            return BlobKey(tenant: tenant, kind: .panorama, id: String(parts[2]))
        }
        guard parts.count == 3 || parts.count == 4, let tenant = Int64(parts[0]), let kind = BlobKey.Kind(rawValue: String(parts[1])),
              !parts[2].isEmpty, (parts.count == 3) == (kind != .upload), parts.count == 3 || Int64(parts[3]) != nil else { return nil }
        return BlobKey(tenant: tenant, kind: kind, id: String(parts[2]))
    }

    /// The objects to remove among `objects`: toursd's, not named, older than `grace`.
    package static func orphans(_ objects: [ObjectSummary], named: Set<BlobKey>, now: Int64, grace: Int64) -> [ObjectSummary] {
        objects.filter { object in
            guard let key = key(of: object.key) else { return false }
            return !named.contains(key) && object.lastModified <= now - grace
        }
    }

    /// The multipart uploads to abort, and when each still listed was first seen.
    package static func staleUploads(_ uploads: [MultipartUpload], firstSeen: [String: Int64], now: Int64, grace: Int64)
        -> (abort: [MultipartUpload], firstSeen: [String: Int64]) {
        var seen: [String: Int64] = [:]
        var abort: [MultipartUpload] = []
        for upload in uploads where key(of: upload.key) != nil {
            let first = firstSeen[upload.uploadId] ?? now
            if now - first >= grace && firstSeen[upload.uploadId] != nil { abort.append(upload) } else { seen[upload.uploadId] = first }
        }
        return (abort, seen)
    }
}

extension StoredFiles {
    /// Which of `keys` the database's rows name (as `named(by:kinds:)` does), one query per
    /// tenant and kind.
    package static func named(among keys: [BlobKey], by db: any SQLConnection) async throws -> Set<BlobKey> {
        var named: Set<BlobKey> = []
        let groups = Dictionary(grouping: keys) { "\($0.tenant)/\($0.kind.rawValue)" }
        for group in groups.values {
            guard let first = group.first else { continue }
            // Each row found by its primary key (tenant, id): a world map's name starts with its
            // floor's id (`<floorId>.<random>`, or the id alone for the oldest).
            let ids = Set(group.map { first.kind == .worldMap ? String($0.id.prefix { $0 != "." }) : $0.id })
            var list = JSONWriter()
            list.array(ids.sorted()) { $0.string($1) }
            // As TourStore.storedPanoramas asks: PostgreSQL plans `= ANY (ARRAY(…))` as key lookups.
            let among = db.dialect.pick(sqlite: "IN (SELECT value FROM json_each(?))",
                                        postgresql: "= ANY (ARRAY(SELECT json_array_elements_text(CAST(? AS json))))")
            let sql = switch first.kind {
            case .panorama: "SELECT id FROM panoramas WHERE tenant_id = ? AND id \(among)"
            case .worldMap: "SELECT coalesce(world_map_file, id) FROM floors WHERE tenant_id = ? AND id \(among) AND world_map_sha256 IS NOT NULL"
            case .upload: "SELECT id FROM uploads WHERE tenant_id = ? AND id \(among) AND state = 'receiving'"
            }
            for row in try await db.query(sql, first.tenant, String(decoding: list.bytes, as: UTF8.self)) {
                named.insert(BlobKey(tenant: first.tenant, kind: first.kind, id: try row.decode(0, as: String.self)))
            }
        }
        return named
    }
}
