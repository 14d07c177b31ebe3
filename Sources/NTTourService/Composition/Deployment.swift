import Foundation
import NTObjectStorage
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// The deployment a configuration describes, decided once: where its rows and its blobs are.
/// The composition (this folder: `SyncService.open`, its start-up, `Admin`'s commands) builds
/// the service's parts from it; no other part asks the configuration which backend it runs on,
/// and none is handed a store it must downcast.
public struct Deployment: Sendable {
    /// The database.
    public enum Records: Sendable, Equatable {
        /// SQLite in the data directory, for one daemon: the embedded default.
        case sqlite(path: String)
        /// PostgreSQL, which several daemons may share.
        case postgres(url: String)

        public init(_ storage: StorageSettings) {
            self = storage.databaseUrl.isEmpty ? .sqlite(path: storage.dataDir + "/toursd.sqlite") : .postgres(url: storage.databaseUrl)
        }

        /// Several daemons may share it.
        var spansDaemons: Bool {
            if case .postgres = self { true } else { false }
        }

        /// The database in what an operator is told.
        var name: String {
            switch self {
            case .sqlite(let path): path
            case .postgres: "the PostgreSQL database of databaseUrl"
            }
        }
    }

    /// Where panoramas, plans and world maps are stored.
    public enum Blobs: Sendable, Equatable {
        /// A folder: the data directory's own, or (`shared`, `blobDir`) one several daemons share.
        case folder(path: String, shared: Bool)
        /// An S3-compatible bucket, which several daemons may share.
        case bucket(BucketSettings)
    }

    public let records: Records
    public let blobs: Blobs

    /// `environment`: where a bucket's AWS variables are read.
    public init(_ storage: StorageSettings, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StartupError) {
        records = Records(storage)
        let bucket: BucketSettings?
        do {
            bucket = try BucketSettings.resolve(blobStore: storage.blobStore, endpoint: storage.s3Endpoint, region: storage.s3Region,
                                                pathStyle: storage.s3PathStyle, environment: environment)
        } catch {
            throw StartupError(error.description)
        }
        blobs = bucket.map(Blobs.bucket) ?? .folder(path: storage.blobFolder, shared: !storage.blobDir.isEmpty)
    }

    /// Several daemons may share its state: one may be between placing a file and committing
    /// its row while another looks, and an upload's writer is found through the database.
    var spansDaemons: Bool { records.spansDaemons }
}
