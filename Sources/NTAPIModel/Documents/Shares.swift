/// docs/api.md "Sharing a tour": a share link of one tour. `url` (`/t/…`) only in the answer that
/// made it: the secret is stored only as a hash and shown once.
public struct ShareDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var tourId: String
    public var url: String?
    /// What its maker calls it ("Sent to the Millers"); nil: no label.
    public var label: String?
    public var createdAt: String
    public var expiresAt: String
    /// The origins whose pages may frame the link's embed form (`/t/…/embed`); none: no site may.
    public var frameAncestors: [String]
    /// Whether its visitors may fetch each panorama's full-size image (made again without the
    /// camera's metadata); else they see previews and tiles only.
    public var offersOriginals: Bool

    public init(id: String, tourId: String, url: String?, label: String? = nil, createdAt: String, expiresAt: String,
                frameAncestors: [String] = [], offersOriginals: Bool = false) {
        self.id = id
        self.tourId = tourId
        self.url = url
        self.label = label
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.frameAncestors = frameAncestors
        self.offersOriginals = offersOriginals
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "share")
        var origins: [String] = []
        for origin in try json.array("frameAncestors") {
            guard let text = origin.string else { throw InvalidDocument("frameAncestors must be an array of strings") }
            origins.append(text)
        }
        self.init(id: try json.string("id"), tourId: try json.string("tourId"), url: try json.optionalString("url"), label: try json.optionalString("label"),
                  createdAt: try json.string("createdAt"), expiresAt: try json.string("expiresAt"), frameAncestors: origins,
                  offersOriginals: try json.bool("offersOriginals"))
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("createdAt"); writer.string(createdAt)
            writer.key("expiresAt"); writer.string(expiresAt)
            writer.key("frameAncestors"); writer.array(frameAncestors) { $0.string($1) }
            writer.key("id"); writer.string(id)
            writer.key("label"); writer.string(label)
            writer.key("offersOriginals"); writer.bool(offersOriginals)
            writer.key("tourId"); writer.string(tourId)
            if let url { writer.key("url"); writer.string(url) }
        }
    }
}

/// The body of `POST /v1/tours/{tourId}/shares`: `{"expiresInSeconds": N, "label": "…",
/// "frameAncestors": [origin…], "offersOriginals": false}`, every field optional: N within the
/// server's range (docs/api.md: 1 hour to 90 days by default; absent, the server's default, 30
/// days), a label as any name people read (`DisplayName`), at most `maxOrigins` origins.
public struct ShareInput: Equatable, Sendable {
    public var expiresInSeconds: Int
    public var label: String?
    public var frameAncestors: [String]
    public var offersOriginals: Bool

    public static func parse(_ bytes: [UInt8], allowed: ClosedRange<Int>, defaultSeconds: Int, maxOrigins: Int,
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
        let seconds: Int
        if let given = json["expiresInSeconds"], !given.isNull { seconds = try json.integer("expiresInSeconds") } else { seconds = defaultSeconds }
        let offers: Bool
        if let given = json["offersOriginals"], !given.isNull { offers = try json.bool("offersOriginals") } else { offers = false }
        return try ShareInput(expiresInSeconds: seconds, label: try json.optionalString("label"), frameAncestors: origins, offersOriginals: offers)
            .validated(allowed, maxOrigins: maxOrigins)
    }

    public init(expiresInSeconds: Int, label: String? = nil, frameAncestors: [String] = [], offersOriginals: Bool = false) {
        self.expiresInSeconds = expiresInSeconds
        self.label = label
        self.frameAncestors = frameAncestors
        self.offersOriginals = offersOriginals
    }

    /// Checked, its label trimmed (a name people read: `DisplayName`) and its origins in their
    /// one spelling (lowercase, without duplicates).
    public func validated(_ allowed: ClosedRange<Int>, maxOrigins: Int) throws(InvalidDocument) -> ShareInput {
        guard allowed.contains(expiresInSeconds) else {
            throw InvalidDocument("expiresInSeconds must be \(allowed.lowerBound) to \(allowed.upperBound)")
        }
        let named: String?
        if let label { named = try DisplayName.validated(label, "label") } else { named = nil }
        guard frameAncestors.count <= maxOrigins else { throw InvalidDocument("frameAncestors holds at most \(maxOrigins) origins") }
        var origins: [String] = []
        for text in frameAncestors {
            let origin = try FrameAncestor.validated(text)
            if !origins.contains(origin) { origins.append(origin) }
        }
        return ShareInput(expiresInSeconds: expiresInSeconds, label: named, frameAncestors: origins, offersOriginals: offersOriginals)
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
