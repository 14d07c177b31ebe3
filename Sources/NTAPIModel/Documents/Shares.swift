/// docs/api.md "Sharing a tour": a share link of one tour. `url` (`/t/…`) only in the answer that
/// made it: the secret is stored only as a hash and shown once.
public struct ShareDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var tourId: String
    public var url: String?
    public var createdAt: String
    public var expiresAt: String
    /// The origins whose pages may frame the link's embed form (`/t/…/embed`); none: no site may.
    public var frameAncestors: [String]

    public init(id: String, tourId: String, url: String?, createdAt: String, expiresAt: String, frameAncestors: [String] = []) {
        self.id = id
        self.tourId = tourId
        self.url = url
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.frameAncestors = frameAncestors
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "share")
        var origins: [String] = []
        for origin in try json.array("frameAncestors") {
            guard let text = origin.string else { throw InvalidDocument("frameAncestors must be an array of strings") }
            origins.append(text)
        }
        self.init(id: try json.string("id"), tourId: try json.string("tourId"), url: try json.optionalString("url"),
                  createdAt: try json.string("createdAt"), expiresAt: try json.string("expiresAt"), frameAncestors: origins)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("createdAt"); writer.string(createdAt)
            writer.key("expiresAt"); writer.string(expiresAt)
            writer.key("frameAncestors"); writer.array(frameAncestors) { $0.string($1) }
            writer.key("id"); writer.string(id)
            writer.key("tourId"); writer.string(tourId)
            if let url { writer.key("url"); writer.string(url) }
        }
    }
}

/// The body of `POST /v1/tours/{tourId}/shares`: `{"expiresInSeconds": N, "frameAncestors":
/// [origin…]}`, N within the server's range (docs/api.md: 1 hour to 90 days by default), at
/// most `maxOrigins` origins (optional: none).
public struct ShareInput: Equatable, Sendable {
    public var expiresInSeconds: Int
    public var frameAncestors: [String]

    public static func parse(_ bytes: [UInt8], allowed: ClosedRange<Int>, maxOrigins: Int,
                             maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> ShareInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        var origins: [String] = []
        if let list = json["frameAncestors"], !list.isNull {
            guard let items = list.array else { throw InvalidDocument("frameAncestors must be an array of origins") }
            for item in items {
                guard let text = item.string else { throw InvalidDocument("frameAncestors must be an array of origins") }
                origins.append(text)
            }
        }
        return try ShareInput(expiresInSeconds: json.integer("expiresInSeconds"), frameAncestors: origins).validated(allowed, maxOrigins: maxOrigins)
    }

    public init(expiresInSeconds: Int, frameAncestors: [String] = []) {
        self.expiresInSeconds = expiresInSeconds
        self.frameAncestors = frameAncestors
    }

    /// Checked, its origins in their one spelling (lowercase, without duplicates).
    public func validated(_ allowed: ClosedRange<Int>, maxOrigins: Int) throws(InvalidDocument) -> ShareInput {
        guard allowed.contains(expiresInSeconds) else {
            throw InvalidDocument("expiresInSeconds must be \(allowed.lowerBound) to \(allowed.upperBound)")
        }
        guard frameAncestors.count <= maxOrigins else { throw InvalidDocument("frameAncestors holds at most \(maxOrigins) origins") }
        var origins: [String] = []
        for text in frameAncestors {
            let origin = try FrameAncestor.validated(text)
            if !origins.contains(origin) { origins.append(origin) }
        }
        return ShareInput(expiresInSeconds: expiresInSeconds, frameAncestors: origins)
    }
}

/// An origin that may frame a share's embed, as a Content-Security-Policy `frame-ancestors`
/// source: `https://host[:port]` or `http://…`, the host a DNS name (its first label may be
/// `*`, for every subdomain) or an IPv4 address. Nothing else: no path, no quote, no space or
/// `;` (which would write another directive into the policy).
public enum FrameAncestor {
    public static func validated(_ text: String) throws(InvalidDocument) -> String {
        let origin = text.lowercased()
        let refused = InvalidDocument("frameAncestors: \"\(text.prefix(80))\" is not an origin like https://agency.example or https://*.agency.example:8443")
        guard origin.utf8.count <= 200 else { throw refused }
        let scheme: Substring
        if origin.hasPrefix("https://") { scheme = "https://" } else if origin.hasPrefix("http://") { scheme = "http://" } else { throw refused }
        let rest = origin.dropFirst(scheme.count)
        let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard parts[1].allSatisfy({ ("0"..."9").contains($0) }), let port = Int(parts[1]), (1...65_535).contains(port) else { throw refused }
        }
        let labels = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        for (index, label) in labels.enumerated() {
            let wildcard = index == 0 && label == "*" && labels.count > 2
            let name = !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                && label.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            guard wildcard || name else { throw refused }
        }
        return origin
    }
}
