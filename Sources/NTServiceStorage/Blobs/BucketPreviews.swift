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

    /// A store that says it is unavailable (a 5xx, no answer) is asked again after
    /// `retryAfterSeconds`, as clients are told to, three times in all: the panorama's processing
    /// is not waited on, and a preview kept spares every other daemon a decode.
    package func keepPreview(_ name: String, _ bytes: [UInt8]) async throws {
        for attempt in 1... {
            do {
                return try await calls { try $0.put(name, .bytes(bytes), contentType: "image/jpeg") }
            } catch let error as StorageError where error.kind == .unavailable && attempt < Self.keepAttempts {
                try await Task.sleep(for: .seconds(max(1, retryAfterSeconds)))
            }
        }
    }

    private static let keepAttempts = 3

    package func removePreviews(tenant: Int64, ids: [String]) async {
        _ = try? await calls { transfer in
            for id in ids {
                for preview in try transfer.list("\(tenant)/previews/\(id)/") { try transfer.delete(preview.key) }
            }
        }
    }
}
