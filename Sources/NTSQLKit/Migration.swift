import Foundation

/// One schema step: `NNNN_name.sql`.
public struct Migration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// The file name it came from.
    public var fileName: String { String(format: "%04d_%@.sql", version, name) }
}

/// A migration that failed, naming its file; the database is left as it was before it.
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    public let fileName: String
    public let reason: String
    public var description: String { "migration \(fileName) failed: \(reason)" }

    public init(fileName: String, reason: String) {
        self.fileName = fileName
        self.reason = reason
    }
}
