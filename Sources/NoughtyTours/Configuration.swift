import NTAPIModel
import NTCurlRuntime
import Foundation

/// How the library is set up: where the server is, its token (a tenant token, or a grant's),
/// where local storage lives, and how the upload queue sends.
public struct Configuration: Sendable {
    public var server: URL
    public var token: String
    public var storageDirectory: URL
    public var sync: SyncOptions
    /// Asked for a fresh token when the server says the grant `token` is expired (docs/client.md
    /// "Grants"); nil: an expired grant fails the request as the server answered it.
    public var credentialProvider: CredentialProvider?

    public init(server: URL, token: String, storageDirectory: URL, sync: SyncOptions = SyncOptions(),
                credentialProvider: CredentialProvider? = nil) {
        self.server = server
        self.token = token
        self.storageDirectory = storageDirectory
        self.sync = sync
        self.credentialProvider = credentialProvider
    }
}

/// The NoughtyTours sync layer on Linux (docs/client.md): local storage, handles, capture calls,
/// status, and the upload queue.
public final class NoughtyTours: Sendable {
    public let configuration: Configuration
    public let properties: PropertyManagement
    public let structureCapture: StructureCapture
    public let panoramaCapture: PanoramaCapture
    let store: LocalStore
    let queue: UploadQueue
    let syncEvents = SyncEvents()

    /// Opens local storage (creating it); throws `storageUnavailable` when it cannot, and
    /// `invalidInput` for a server URL, token or sync options the queue cannot work with.
    public init(configuration: Configuration) async throws(NoughtyToursError) {
        guard let scheme = configuration.server.scheme?.lowercased(), ["http", "https"].contains(scheme), configuration.server.host != nil else {
            throw .invalidInput("the server is an http:// or https:// URL, not \(configuration.server)")
        }
        // It goes into a header line as it is.
        guard Credentials.isValid(configuration.token) else {
            throw .invalidInput("the token is printable ASCII without spaces (RFC 6750)")
        }
        self.configuration = configuration
        let options = try configuration.sync.validated()
        store = try LocalStore(directory: configuration.storageDirectory)
        let server = ServerEndpoint(server: configuration.server, token: configuration.token, provider: configuration.credentialProvider)
        properties = PropertyManagement(store: store, remote: RemoteServer(server: server, options: options))
        structureCapture = StructureCapture(store: store)
        panoramaCapture = PanoramaCapture(store: store)
        queue = UploadQueue(store: store, server: server, options: options, events: syncEvents)
    }

    /// Starts the upload queue: what was in flight when the process last stopped resumes
    /// (large panoramas from the server's offset), and the queue drains on its own from now on.
    public func start() async throws(NoughtyToursError) {
        try CurlRuntime.ensureStarted()
        try await queue.start()
    }

    /// Stops the queue: transfers in flight stop and resume at the next `start()`, their
    /// attempt not counted.
    public func stop() async {
        await queue.stop()
    }

    /// "The user taps sync again": forgives the attempts of every failed item, and sends what
    /// waits out a backoff now. Items drain when the queue is started.
    public func sync() async throws(NoughtyToursError) {
        try await store.write { db in try Queue.forgive(db) }
    }

    /// Returns once the queue has nothing it can send now: everything uploaded, failed, or
    /// waiting on an item that failed; or local storage is failing (the next call that touches
    /// it throws `storageUnavailable`). At once when the queue is not started.
    public func idle() async {
        await queue.idle()
    }

    /// What the queue has yet to upload: items not done, and the bytes of their files (for a
    /// progress bar's total).
    public func pendingUploads() async throws(NoughtyToursError) -> (items: Int, bytes: Int64) {
        try await store.read { db in
            let items = try db.first("SELECT count(*) FROM queue_items WHERE state IN ('pending', 'inflight', 'failed')")?.decode(0, as: Int.self) ?? 0
            let bytes = try db.first("""
                SELECT coalesce(sum(p.size), 0) FROM queue_items AS q JOIN panoramas AS p ON p.id = q.entity_id
                WHERE q.kind = 'panorama' AND q.state != 'done'
                """)?.decode(0, as: Int64.self) ?? 0
            return (items, bytes)
        }
    }

    /// The queue's progress, uploads and failed attempts, from now on, until the iterating
    /// task is cancelled. Every `uploaded` and `attemptFailed` is delivered however slowly
    /// the host reads; progress events of one item may be coalesced to the latest.
    public func events() -> SyncEventStream {
        syncEvents.stream()
    }

    /// Asks the server for a page of one property with the token: throws `transport` when it
    /// cannot be reached, the server's error when it refuses the token (401) or is not a
    /// NoughtyTours server; returns when both are right. Nothing is written.
    public func checkServer() async throws(NoughtyToursError) {
        _ = try await properties.remote.document("/v1/properties?limit=1", PropertyPage.init)
    }

    /// The release of this library (and of the toursd it speaks to, at its best).
    public static var version: String { Release.version }

    /// Observers of the local database currently registered (for tests of leaks).
    var observerCount: Int {
        get async { await store.observerCount }
    }
}
