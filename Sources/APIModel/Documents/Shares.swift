/// docs/api.md "Sharing a tour": a share link of one tour. `url` (`/t/…`) only in the answer that
/// made it: the secret is stored only as a hash and shown once.
public struct ShareDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var tourId: String
    public var url: String?
    public var createdAt: String
    public var expiresAt: String

    public init(id: String, tourId: String, url: String?, createdAt: String, expiresAt: String) {
        self.id = id
        self.tourId = tourId
        self.url = url
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "share")
        self.init(id: try json.string("id"), tourId: try json.string("tourId"), url: try json.optionalString("url"),
                  createdAt: try json.string("createdAt"), expiresAt: try json.string("expiresAt"))
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("createdAt"); writer.string(createdAt)
            writer.key("expiresAt"); writer.string(expiresAt)
            writer.key("id"); writer.string(id)
            writer.key("tourId"); writer.string(tourId)
            if let url { writer.key("url"); writer.string(url) }
        }
    }
}

/// `{"items": [Share…]}`: a tour's unexpired share links.
public struct ShareList: JSONDocument, Equatable, Sendable {
    public var items: [ShareDocument]
    /// The cursor of the next page (`?after=`), nil on the last.
    public var next: String?

    public init(items: [ShareDocument], next: String? = nil) {
        self.items = items
        self.next = next
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("items"); writer.array(items) { writer, share in share.write(to: &writer) }
            writer.key("next"); writer.string(next)
        }
    }
}

/// The body of `POST /v1/tours/{tourId}/shares`: `{"expiresInSeconds": N}`, N within the
/// server's range (docs/api.md: 1 hour to 90 days by default).
public struct ShareInput: Equatable, Sendable {
    public var expiresInSeconds: Int

    public static func parse(_ bytes: [UInt8], allowed: ClosedRange<Int>, maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> ShareInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        return try ShareInput(expiresInSeconds: json.integer("expiresInSeconds")).validated(allowed)
    }

    public init(expiresInSeconds: Int) {
        self.expiresInSeconds = expiresInSeconds
    }

    public func validated(_ allowed: ClosedRange<Int>) throws(InvalidDocument) -> ShareInput {
        guard allowed.contains(expiresInSeconds) else {
            throw InvalidDocument("expiresInSeconds must be \(allowed.lowerBound) to \(allowed.upperBound)")
        }
        return self
    }
}
