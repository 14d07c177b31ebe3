import Foundation

/// Where a property's sync stands.
public enum SyncState: String, Sendable, Equatable {
    case pending, syncing, synced, failed
}

/// What a property holds and how much of it reached the backend, read from local storage only:
/// cheap, and it works with the server down.
public struct PropertyStatus: Sendable, Equatable {
    public let property: Property
    /// nil until the property has synced for the first time.
    public let tourId: UUID?
    public let sync: SyncState
    public let floorCount: Int
    public let roomCount: Int
    public let panoramaCount: Int
    public let panoramasUploaded: Int
    /// Panoramas with a failed attempt not yet uploaded: the queue retries them on its own.
    public let panoramasFailed: Int

    /// Synced, and every captured panorama uploaded.
    public var isComplete: Bool { sync == .synced && panoramasUploaded == panoramaCount }
}
