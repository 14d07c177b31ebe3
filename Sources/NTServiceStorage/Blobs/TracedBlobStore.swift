import NTServiceModel
import NTThreadPools
import NTTracing

/// A blob store whose calls are spans of the request that makes them (`store <call>`, with
/// the blob's key): what the service is given when traces are sent.
package final class TracedBlobStore: BlobStore {
    private let store: any BlobStore

    package init(_ store: any BlobStore) {
        self.store = store
    }

    package var io: ThreadPool { store.io }
    package var incoming: IncomingFolder { store.incoming }
    package var unavailableReason: String? { store.unavailableReason }
    package var metrics: String { store.metrics }
    package func stop() { store.stop() }
    package func readURL(_ key: BlobKey) -> String? { store.readURL(key) }

    package func receive(_ body: some ByteStream, toward key: BlobKey) async throws -> ReceivedBlob {
        try await traced("receive", key) { try await store.receive(body, toward: key) }
    }

    package func place(_ received: ReceivedBlob, as key: BlobKey) async throws -> Bool {
        try await traced("place", key) { try await store.place(received, as: key) }
    }

    package func remove(_ keys: [BlobKey]) async {
        await Trace.span("store remove", kind: .client, attributes: [("blobs", String(keys.count))]) { await store.remove(keys) }
    }

    package func openForReading(_ key: BlobKey, sha256: String, range: Range<Int64>, of size: Int64) async throws -> (fd: Int32, offset: Int64) {
        try await traced("open", key) { try await store.openForReading(key, sha256: sha256, range: range, of: size) }
    }

    package func localFile(_ key: BlobKey, sha256: String) async throws -> String {
        try await traced("local file", key) { try await store.localFile(key, sha256: sha256) }
    }

    package var partialsKeepTheirOffset: Bool { store.partialsKeepTheirOffset }

    package func openPartial(_ key: BlobKey, recordedOffset: Int64, capacity: Int64) async throws -> any PartialBlob {
        try await traced("open partial", key) { try await store.openPartial(key, recordedOffset: recordedOffset, capacity: capacity) }
    }

    package func finish(partial: BlobKey, length: Int64, as key: BlobKey) async throws -> Bool {
        try await traced("finish", key) { try await store.finish(partial: partial, length: length, as: key) }
    }

    package func head(partial: BlobKey) async throws -> [UInt8] {
        try await traced("head", partial) { try await store.head(partial: partial) }
    }

    private func traced<T>(_ call: String, _ key: BlobKey, _ body: () async throws -> T) async throws -> T {
        try await Trace.span("store \(call)", kind: .client, attributes: [("blob", BucketBlobStore.name(key))], body)
    }
}
