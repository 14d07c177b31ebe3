import NTObjectStorage
import NTServiceModel
import NTSQLKit

/// A bucket keeps the previews any daemon made, beside their panorama
/// (`<tenant>/previews/<id>/<width>-<digest prefix>.jpg`): each is decoded once for all the
/// daemons. A preview is a cache: one that cannot be fetched or kept is made again.
extension BucketBlobStore: SharedPreviews {
    package func fetchPreview(_ name: String) async -> [UInt8]? {
        try? await calls { transfer -> [UInt8]? in
            do {
                return try transfer.get(name)
            } catch {
                guard case ObjectStoreError.notFound = error else { throw error }
                return nil
            }
        }
    }

    /// In the background: the panorama's processing waits for it, no client does.
    package func keepPreview(_ name: String, _ bytes: [UInt8]) async throws {
        try await backgroundCalls { try $0.put(name, .bytes(bytes), contentType: "image/jpeg") }
    }

    package func removePreviews(tenant: Int64, ids: [String]) async {
        _ = try? await calls { transfer in
            for id in ids {
                for preview in try transfer.list("\(tenant)/previews/\(id)/") { try transfer.delete(preview.key) }
            }
        }
    }
}
