/// Why storage (a database, a blob store) could not do what was asked, whichever backend
/// failed: the storage layer's one taxonomy. Stores and backends throw it (or an error of
/// their own that says which kind it is, `StorageFailure`); the service turns each kind into
/// its answer once, at its edge.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable, CaseIterable {
        /// The database or the store cannot be reached, or takes no writes for now: asking
        /// again later can work.
        case unavailable
        /// No room is left for what was being written.
        case full
        /// What was stored is not what the code reads it as: a missing column, a NULL where a
        /// value must be, a value of another type, a row that should exist and does not, a
        /// file shorter than its record.
        case corrupt
        /// Anything else the backend reported (an I/O error, a statement refused).
        case failed
    }

    public let kind: Kind
    /// What failed, in words a client of the service may read: the component, never its
    /// address or the backend's own message.
    public let message: String
    /// The backend's own words (a host and port, a path): for the log, never an answer.
    public let detail: String?
    /// For `unavailable`: when asking again can work, when the backend knows better than the
    /// service's default.
    public let retryAfterSeconds: Int?

    public init(_ kind: Kind, _ message: String, detail: String? = nil, retryAfterSeconds: Int? = nil) {
        self.kind = kind
        self.message = message
        self.detail = detail
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The message and the detail: what the log says.
    public var description: String { detail.map { "\(message) (\($0))" } ?? message }
}

/// A backend's own error that says which kind of storage failure it is (SQLite's, PostgreSQL's,
/// a database file gone, the object store's): what the service's edge asks of any of them.
public protocol StorageFailure: Error {
    var storageError: StorageError { get }
}

extension StorageError: StorageFailure {
    public var storageError: StorageError { self }
}
