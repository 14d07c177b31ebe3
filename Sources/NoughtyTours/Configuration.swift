import Foundation

/// How the library is set up: where the server is, its token, where local storage lives.
public struct Configuration: Sendable {
    public var server: URL
    public var token: String
    public var storageDirectory: URL

    public init(server: URL, token: String, storageDirectory: URL) {
        self.server = server
        self.token = token
        self.storageDirectory = storageDirectory
    }
}

/// The NoughtyTours sync layer on Linux (CLIENT.md): local storage, handles, capture calls,
/// status, and the upload queue.
public final class NoughtyTours: Sendable {
    public let configuration: Configuration
    public let properties: PropertyManagement
    public let structureCapture: StructureCapture
    public let panoramaCapture: PanoramaCapture
    let store: LocalStore

    /// Opens local storage (creating it); throws `storageUnavailable` when it cannot.
    public init(configuration: Configuration) async throws(NoughtyToursError) {
        self.configuration = configuration
        store = try LocalStore(directory: configuration.storageDirectory)
        properties = PropertyManagement(store: store)
        structureCapture = StructureCapture(store: store)
        panoramaCapture = PanoramaCapture(store: store)
    }

    /// Starts the library: storage is open; the queue resumes (its draining arrives with the
    /// transport).
    public func start() async throws(NoughtyToursError) {
        try CurlRuntime.ensureInitialized()
    }

    /// Observers of the local database currently registered (for tests of leaks).
    var observerCount: Int {
        get async { await store.observerCount }
    }
}
