import NTAPIModel
import Foundation

/// A property as the server lists it (`PropertyManagement.remoteProperties()`).
public struct RemoteProperty: Sendable, Equatable, Hashable {
    public let id: String
    public let name: String
    public let tourId: UUID
    public let floorCount: Int
    public let updatedAt: Date
}

extension RemoteProperty {
    /// From docs/api.md's Property; ids and times it cannot read are the server's fault.
    init(_ document: PropertyDocument) throws(InvalidDocument) {
        guard let tourId = UUID(uuidString: document.tourId) else { throw InvalidDocument("tourId is not a UUID") }
        guard let updatedAt = RFC3339.date(document.updatedAt) else { throw InvalidDocument("updatedAt is not an RFC 3339 time") }
        self.init(id: document.id, name: document.name, tourId: tourId, floorCount: document.floorCount, updatedAt: updatedAt)
    }

    static func read(_ value: JSONValue) throws(InvalidDocument) -> RemoteProperty {
        try RemoteProperty(try PropertyDocument(value))
    }
}

/// RFC 3339 times as the server writes them (with or without fractional seconds).
enum RFC3339 {
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
