import Foundation

/// What an upload queue item carries.
public enum UploadKind: String, Sendable, Equatable {
    case property, floor, plan, worldMap, panorama, propertyDeletion
}

/// One item of the upload queue, as events name it.
public struct UploadItem: Sendable, Equatable, Hashable {
    public let propertyId: String
    public let kind: UploadKind
    /// The property, floor or panorama id the item uploads.
    public let entityId: String
}

/// An item that failed at least once and is not done, as local storage keeps it: it
/// survives a restart, for a host that subscribed to events late or not at all.
public struct UploadFailure: Sendable, Equatable {
    public let item: UploadItem
    /// Attempts made since the last `sync()`.
    public let attempts: Int
    public let lastError: NoughtyToursError
    /// False: the item stays failed until `sync()`.
    public let willRetry: Bool
    public let failedAt: Date
}

/// What the background queue reports as it works: byte progress (for a progress bar), items
/// that reached the server, and attempts that failed. Failures reach the host here and in
/// `PropertyStatus`, never as a crash or a thrown error.
public enum SyncEvent: Sendable, Equatable {
    /// `sent` of `total` bytes of the item are on the server or on their way.
    case progress(UploadItem, sent: Int64, total: Int64)
    /// The server already held `offset` of the item's `total` bytes (an upload interrupted
    /// earlier, by a lost connection or a killed process): the upload goes on from there, and
    /// progress counts them as sent. Always delivered, before the item's next progress.
    case resumed(UploadItem, offset: Int64, total: Int64)
    case uploaded(UploadItem)
    /// Attempt number `attempt` failed; `willRetry` false means the item now stays failed
    /// until `sync()`.
    case attemptFailed(UploadItem, NoughtyToursError, attempt: Int, willRetry: Bool)
}
